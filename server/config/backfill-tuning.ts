/**
 * The backfill's tuning from the environment (BACKFILL_ENV): only the variables that are set, so
 * a deployment without them keeps what its `background_migrations` rows say.
 */
import { BACKFILL_ENV, BACKFILL_LIMITS, type BackfillTuningKey, type EnvReader } from '../contract/env.ts';

export type BackfillTuning = Partial<Record<BackfillTuningKey, number>>;

/** Reads the tuning variables; bad values are added to the reader's problems. */
export function readBackfillTuning(r: EnvReader): BackfillTuning {
  const out: BackfillTuning = {};
  for (const key of Object.keys(BACKFILL_ENV) as BackfillTuningKey[]) {
    const v = r.intIn(BACKFILL_ENV[key], undefined, BACKFILL_LIMITS[key]);
    if (v !== undefined) out[key] = v;
  }
  return out;
}
