/**
 * The backfill's tuning from the environment (BACKFILL_ENV): only the variables that are set, so
 * a deployment without them keeps what its `background_migrations` rows say.
 */
import { BACKFILL_ENV, BACKFILL_LIMITS, type BackfillTuningKey } from '../../contract/env.ts';
import { fields, intIn } from '../../contract/env-schema.ts';

export type BackfillTuning = Partial<Record<BackfillTuningKey, number>>;

const KEYS = Object.keys(BACKFILL_ENV) as BackfillTuningKey[];

export const backfillSchema = fields(
  Object.fromEntries(KEYS.map((k) => [k, [BACKFILL_ENV[k], intIn(BACKFILL_LIMITS[k])] as const])),
).transform((v): { backfill: BackfillTuning } => ({
  backfill: Object.fromEntries(Object.entries(v).filter(([, n]) => n !== undefined)),
}));
