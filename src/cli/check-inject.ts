/**
 * `sidecarset check-inject POD`: for every SidecarSet in the cluster, whether it injected the pod
 * and why not (like `istioctl x check-inject`). The verdicts are the core's
 * (core/diagnosis/check-inject.ts); this fetches the pod, the SidecarSets and the pod's namespace.
 */
import type { PodCheck } from '../core/diagnosis/check-inject.js';
import { checkInjection } from '../core/diagnosis/check-inject.js';
import type { ClusterFlags } from '../k8s/cli-client.js';
import { cliKubeConfig, contextNamespace, createCliClient } from '../k8s/cli-client.js';
import type { DataFormat } from './format.js';
import { renderData, table } from './format.js';
import type { Io } from './io.js';

export interface CheckInjectOptions extends ClusterFlags {
  namespace?: string;
  /** The MutatingWebhookConfiguration of the pod webhook, whose selectors decide what it sees. */
  webhookConfiguration: string;
  output: 'table' | DataFormat;
}

export async function runCheckInject(
  podName: string,
  options: CheckInjectOptions,
  io: Io,
): Promise<number> {
  const kubeConfig = cliKubeConfig(options);
  const client = createCliClient(kubeConfig);
  const namespace = options.namespace ?? contextNamespace(kubeConfig);
  const [pod, sidecarSets, namespaces, webhook] = await Promise.all([
    client.getPod(namespace, podName),
    client.listSidecarSets(),
    client.namespaceLabels(namespace),
    client.podWebhookSelectors(options.webhookConfiguration),
  ]);
  const result = checkInjection(pod, sidecarSets, namespaces, webhook);
  io.stdout.write(
    options.output === 'table' ? renderTable(result) : renderData(result, options.output),
  );
  return 0;
}

function renderTable(result: PodCheck): string {
  const injected = result.verdicts.filter((v) => v.injected).map((v) => v.sidecarSet);
  const lines = [
    `pod ${result.pod}: injected by ${injected.length === 0 ? 'no SidecarSet' : injected.join(', ')}`,
  ];
  lines.push(`webhook scope: ${result.webhookScope.message}`);
  if (result.unknownInjected.length > 0) {
    lines.push(
      `  its injected list also names SidecarSets that no longer exist: ${result.unknownInjected.join(', ')}`,
    );
  }
  if (result.verdicts.length === 0) {
    lines.push('no SidecarSet in the cluster');
    return `${lines.join('\n')}\n`;
  }
  const rows = [
    ['SIDECARSET', 'STATE', 'REASON'],
    ...result.verdicts.map((v) => [v.sidecarSet, v.state, v.reason]),
  ];
  return `${[...lines, ...table(rows)].join('\n')}\n`;
}
