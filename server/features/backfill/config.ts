/** The tuning a backfill step runs with. */

import { BACKFILL_DEFAULTS, type BackfillTuningKey } from '../../contract/env.ts';
import type { BackfillTuning } from '../../kernel/config/backfill-tuning.ts';

/** The row's arguments, else the defaults. */
export function effectiveTuning(args: BackfillTuning): Record<BackfillTuningKey, number> {
  return { ...BACKFILL_DEFAULTS, ...args };
}
