/** The tuning a backfill step runs with. */
import type { BackfillTuning } from '../config/backfill-tuning.ts';
import { BACKFILL_DEFAULTS, type BackfillTuningKey } from '../contract/env.ts';

/** The row's arguments, else the defaults. */
export function effectiveTuning(args: BackfillTuning): Record<BackfillTuningKey, number> {
  return { ...BACKFILL_DEFAULTS, ...args };
}
