/**
 * Holds the backfill while the worker reports the analytics store short of disk for its next step
 * (the worker's check, server/features/backfill/pressure.ts): no new Job starts, and a running one waits
 * between chunks. The reason goes to status.blockedBy and BackfillComplete.
 */
import type { StepInput, StepOutput } from './step.ts';

/** How often to look again: the store frees disk through merges and TTLs over minutes. */
const RECHECK_SECONDS = 60;

/** The reason backfill step `step` waits for the store, recorded in `out`; undefined when it does not. */
export function heldForStore(input: StepInput, out: StepOutput, step: number): string | undefined {
  const b = input.world.backfill;
  if (!b.known || b.pressure?.step !== step) return undefined;
  out.wait(RECHECK_SECONDS, `backfill step ${step} is paused: ${b.pressure.reason}`);
  return b.pressure.reason;
}
