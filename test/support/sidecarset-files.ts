/** Many distinct, valid SidecarSets as one YAML file, the way a large files-mode setup holds them. */

/**
 * SidecarSet `i` of `n`: its own container, in one of 100 team namespaces, selecting one of 20
 * apps; every tenth also declares the shared `varlog` volume (identical, so no conflict).
 */
export function sidecarSetYaml(i: number, image = 'agent:1'): string {
  const volume = i % 10 === 0 ? '\n  volumes: [{name: varlog, hostPath: {path: /var/log}}]' : '';
  return `apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: ss-${i}}
spec:
  namespace: team-${i % 100}
  selector: {matchLabels: {app: app-${i % 20}}}
  containers: [{name: agent-${i}, image: '${image}'}]${volume}
`;
}

export function sidecarSetsYaml(n: number, image?: string): string {
  return Array.from({ length: n }, (_, i) => sidecarSetYaml(i, image)).join('---\n');
}
