/**
 * The names of what an installation creates, the same with `kubectl apply -k manifests` and the
 * Helm chart (manifests/base, charts/sidecarset/templates): the defaults of the webhook and the
 * controller, and what `sidecarset check` looks for.
 */
export const INSTALLATION = {
  namespace: 'sidecarset-system',
  crd: 'sidecarsets.apps.kruise.io',
  mutatingWebhookConfiguration: 'sidecarset-mutating-webhook',
  validatingWebhookConfiguration: 'sidecarset-validating-webhook',
  /** The Deployment and the Service of the webhook (which runs the controller too). */
  deployment: 'sidecarset-webhook',
  service: 'sidecarset-webhook',
  /**
   * The Service the CRD's conversion webhook calls: the same pods, not-ready ones included, since
   * a replica needs conversion to sync the cache that makes it ready (docs/adr/0036).
   */
  conversionService: 'sidecarset-conversion',
  /** The controller's leader-election Lease, in the installation's namespace. */
  lease: 'sidecarset-controller',
} as const;
