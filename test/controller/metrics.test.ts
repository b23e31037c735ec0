/** The controller's metrics on the process's metrics endpoint, after a real rollout. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  eventually,
  metrics,
  setUpAgent,
  status,
  updateSidecarSet,
  waitFor,
  withCluster,
} from './cluster.js';

/** The value of the sample `name{labels}` (labels exactly as Prometheus prints them). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('controller metrics', () => {
  it('report the status per SidecarSet, the pods written and the reconciles', async () => {
    await withCluster(
      async (cluster) => {
        await setUpAgent(cluster, 3, { maxUnavailable: 3 });
        await updateSidecarSet(cluster, 'agent', (spec) => {
          ((spec['containers'] as { image: string }[])[0] as { image: string }).image = 'agent:2';
        });
        await waitFor(
          cluster,
          () => status(cluster, 'agent')?.['updatedReadyPods'] === 3,
          'the rollout done',
        );
        // The gauge and the write counter are updated at different points of the rounds (the
        // counter after every write of a round has settled): wait for both, not one then the other.
        await eventually(async () => {
          const text = await metrics(cluster);
          return (
            sample(text, 'sidecarset_pods{sidecarset="agent",state="updated_ready"}') === 3 &&
            sample(text, 'sidecarset_controller_pod_writes_total{kind="upgrade"}') === 3
          );
        }, 'the status and the pod writes in the metrics');
        const text = await metrics(cluster);
        assert.equal(sample(text, 'sidecarset_pods{sidecarset="agent",state="matched"}'), 3);
        assert.equal(sample(text, 'sidecarset_controller_pod_writes_total{kind="upgrade"}'), 3);
        assert.equal(sample(text, 'sidecarset_controller_cached_pods'), 3);
        assert.equal(sample(text, 'sidecarset_controller_leader'), 1);
        const rounds = sample(
          text,
          'sidecarset_controller_reconcile_duration_seconds_count{result="success"}',
        );
        assert.ok(rounds !== undefined && rounds > 0);
        assert.equal(
          rounds,
          sample(text, 'sidecarset_controller_reconciles_total{result="success"}'),
        );

        await cluster.custom.deleteClusterCustomObject({
          group: 'apps.kruise.io',
          version: 'v1beta1',
          plural: 'sidecarsets',
          name: 'agent',
        });
        await eventually(
          async () => !(await metrics(cluster)).includes('sidecarset_pods{sidecarset="agent"'),
          'the gauge gone with the SidecarSet',
        );
      },
      { flags: { qps: 1000, burst: 1000 } },
    );
  });
});
