/**
 * When the propagation job runs next (pure). A fixed interval alone lets a partition wait up to a
 * whole interval after it became eligible (window end + grace), which made the worst-case lag
 * window + grace + interval. The next run is therefore the earlier of one interval from now and
 * the moment the partition filling now becomes eligible, so that lag is window + grace + processing.
 */
import { STAGING_WINDOW_MS } from '../../../features/events/staging.ts';

/**
 * The store compares with its `now()` in whole seconds: a run exactly at the eligible instant could
 * still see the partition as open, so the aligned run comes this much later.
 */
export const ELIGIBILITY_MARGIN_MS = 1_000;

/**
 * Milliseconds from `nowMs` until the next run: partitions become eligible at every window
 * boundary plus the grace (plus the margin), so the next such moment after now, or one interval,
 * whichever comes first.
 */
export function nextRunDelayMs(nowMs: number, intervalMs: number, graceSeconds: number): number {
  const offset = graceSeconds * 1000 + ELIGIBILITY_MARGIN_MS;
  const nextEligible = (Math.floor((nowMs - offset) / STAGING_WINDOW_MS) + 1) * STAGING_WINDOW_MS + offset;
  return Math.min(intervalMs, nextEligible - nowMs);
}
