/**
 * How many of the ordered candidates move this round: calculateUpgradeCount in
 * pkg/controller/sidecarset/sidecarset_strategy.go.
 */

export interface BudgetInput {
  /** Readiness (isReady) of each candidate, in upgrade order. */
  candidatesReady: readonly boolean[];
  /** Scaled partition: how many candidates, from the end of the order, stay back. */
  partition: number;
  /** Scaled maxUnavailable. */
  maxUnavailable: number;
  /** Matched pods unavailable because of the controller (BudgetSummary.unavailable). */
  unavailable: number;
}

export interface BudgetOutcome {
  /** The first `take` candidates are upgraded. */
  take: number;
  /** Candidates before the partition cut; those from `take` to here wait for budget. */
  eligible: number;
  unavailableAfter: number;
}

/**
 * Not-ready candidates need no budget; a ready one needs a free slot, and the walk stops at the
 * first ready candidate without one, so the result is always a prefix of the order.
 */
export function upgradeCount(input: BudgetInput): BudgetOutcome {
  const eligible = Math.max(input.candidatesReady.length - input.partition, 0);
  let unavailable = input.unavailable;
  let take = 0;
  for (; take < eligible; take++) {
    if (input.candidatesReady[take] !== true) continue;
    if (unavailable >= input.maxUnavailable) break;
    unavailable++;
  }
  return { take, eligible, unavailableAfter: unavailable };
}
