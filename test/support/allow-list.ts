/**
 * The patchPodMetadata allow-list the tests' webhooks run with (--patch-pod-metadata-allowlist):
 * SidecarSets may write `example.com/` annotations, the keys the tests patch.
 */
export const EXAMPLE_COM_ALLOWLIST = JSON.stringify({
  rules: [{ allowedAnnotationKeyExprs: ['^example\\.com/'] }],
});
