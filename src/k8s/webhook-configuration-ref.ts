/**
 * Where a caBundle we keep is: a webhook configuration, `mutating/NAME` or `validating/NAME`, or a
 * CustomResourceDefinition's conversion webhook, `crd/NAME` (docs/adr/0015-sidecarset-v1beta1.md).
 */
export interface WebhookConfigurationRef {
  kind: 'mutating' | 'validating' | 'crd';
  name: string;
}

export function parseWebhookConfigurationRef(value: string): WebhookConfigurationRef {
  const match = /^(mutating|validating|crd)\/([a-z0-9.-]+)$/.exec(value.trim());
  if (match?.[1] === undefined || match[2] === undefined) {
    throw new Error(`expected mutating/NAME, validating/NAME or crd/NAME, got "${value}"`);
  }
  return { kind: match[1] as WebhookConfigurationRef['kind'], name: match[2] };
}
