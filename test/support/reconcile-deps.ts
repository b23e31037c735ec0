/** ReconcileDeps over plain caches and a given writer, for rounds run without a cluster. */
import { pino } from 'pino';

import { createUpgradeExpectations } from '../../src/controller/expectations.js';
import { createRecreationExpectations } from '../../src/controller/recreation-expectations.js';
import type { ClusterWriter, ControllerView } from '../../src/controller/ports.js';
import type { ReconcileDeps } from '../../src/controller/reconcile.js';

export function reconcileDeps(
  view: ControllerView,
  writer: ClusterWriter,
  extra: Partial<ReconcileDeps> = {},
): ReconcileDeps {
  return {
    view,
    writer,
    expectations: createUpgradeExpectations(),
    recreations: createRecreationExpectations(),
    inFlight: new Map(),
    podWrites: new Map(),
    takeToken: () => Promise.resolve(),
    now: () => new Date('2026-12-01T12:00:00Z'),
    logger: pino({ level: 'silent' }),
    reported: new Map(),
    podEvents: false,
    ...extra,
  };
}
