/**
 * A controller that cannot record ControllerRevisions says so (issue 37, point 8): here their
 * namespace (--leader-election-namespace) does not exist. The SidecarSet gets the condition
 * RevisionHistoryFailure and a Warning event; both go once the namespace exists.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { runClusterCli } from '../support/cli.js';
import {
  updateSidecarSet,
  setUpAgent,
  status,
  eventSent,
  waitFor,
  withCluster,
} from './cluster.js';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

const conditionsOf = (s: Record<string, unknown> | undefined): Condition[] =>
  (s?.['conditions'] as Condition[] | undefined) ?? [];

describe('ControllerRevisions that cannot be recorded', () => {
  it('are a condition and an event on the SidecarSet until they can', async () => {
    await withCluster(
      async (cluster) => {
        await setUpAgent(cluster, 1, {});
        const failure = (): Condition | undefined =>
          conditionsOf(status(cluster, 'agent')).find((c) => c.type === 'RevisionHistoryFailure');
        await waitFor(cluster, () => failure() !== undefined, 'the condition');
        assert.equal(failure()?.status, 'True');
        assert.equal(failure()?.reason, 'CannotRecordRevision');
        assert.match(
          failure()?.message ?? '',
          /^cannot record the ControllerRevision: namespaces "revisions" not found \(HTTP 404\); /,
        );
        assert.match(failure()?.message ?? '', /rollout undo has no history/);
        await eventSent(cluster, 'RevisionRecordFailed');
        const shown = await runClusterCli(cluster.kubeconfigFile, ['rollout', 'status', 'agent']);
        assert.match(
          shown.stdout,
          /\n {2}revision history: cannot record the ControllerRevision: namespaces "revisions"/,
        );
        const checked = await runClusterCli(cluster.kubeconfigFile, ['check']);
        assert.match(checked.stdout, /SidecarSet agent.*cannot record the ControllerRevision/);

        await cluster.core.createNamespace({ body: { metadata: { name: 'revisions' } } });
        // Any change brings the SidecarSet round again.
        await updateSidecarSet(cluster, 'agent', (spec) => {
          (spec['updateStrategy'] as Record<string, unknown>)['maxUnavailable'] = 2;
        });
        await waitFor(cluster, () => failure() === undefined, 'the condition gone');
        assert.match(status(cluster, 'agent')?.['latestRevision'] as string, /^agent-/);
      },
      { flags: { leaderElectionNamespace: 'revisions' } },
    );
  });
});
