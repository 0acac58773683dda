/** Holds the start of disruptive work (a backfill step, a move to another mode, the cleanup) for a maintenance window. */
import { windowAt } from '../api/windows.ts';
import type { StepInput, StepOutput } from './step.ts';

/** Look again when the window opens, but at least hourly (a spec change re-plans at once anyway). */
const MAX_RECHECK_SECONDS = 3600;

/**
 * Undefined when `what` may start now; otherwise the time the next window opens, with the wait
 * (what and until when) recorded in `out` for status.blockedBy.
 */
export function heldForWindow(input: StepInput, out: StepOutput, what: string): Date | undefined {
  const w = windowAt(input.spec.maintenanceWindows, input.world.now);
  if (w.open) return undefined;
  const seconds = Math.ceil((w.opensAt.getTime() - input.world.now.getTime()) / 1000);
  out.wait(
    Math.max(1, Math.min(MAX_RECHECK_SECONDS, seconds)),
    `${what} waits for the next maintenance window (spec.maintenanceWindows), which opens at ${w.opensAt.toISOString()}`,
  );
  return w.opensAt;
}
