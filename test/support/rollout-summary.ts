/** Planner summaries for the status conditions (src/core/status/status-conditions.ts), as plain objects. */
import type { RolloutSummary } from '../../src/core/status/status-conditions.js';

/** 1 of 4 pods updated and ready, nothing under way or held, unless overridden. */
export function rolloutSummary(overrides: Partial<RolloutSummary> = {}): RolloutSummary {
  return {
    status: { matchedPods: 4, updatedPods: 1, updatedReadyPods: 1 },
    upgrade: [],
    recreate: [],
    flip: [],
    notUpgradable: [],
    held: [],
    budget: { unavailable: 0 },
    ...overrides,
  };
}
