/** A webhook configuration whose caBundle we keep: `mutating/NAME` or `validating/NAME`. */
export interface WebhookConfigurationRef {
  kind: 'mutating' | 'validating';
  name: string;
}

export function parseWebhookConfigurationRef(value: string): WebhookConfigurationRef {
  const match = /^(mutating|validating)\/([a-z0-9.-]+)$/.exec(value.trim());
  if (match?.[1] === undefined || match[2] === undefined) {
    throw new Error(`expected mutating/NAME or validating/NAME, got "${value}"`);
  }
  return { kind: match[1] as WebhookConfigurationRef['kind'], name: match[2] };
}
