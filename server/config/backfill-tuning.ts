/**
 * The backfill's tuning from the environment (BACKFILL_ENV): only the variables that are set, so
 * a deployment without them keeps what its `background_migrations` rows say.
 */
import { z } from 'zod';
import { BACKFILL_ENV, BACKFILL_LIMITS, type BackfillTuningKey } from '../contract/env.ts';
import { intIn } from '../contract/env-schema.ts';

export type BackfillTuning = Partial<Record<BackfillTuningKey, number>>;

const KEYS = Object.keys(BACKFILL_ENV) as BackfillTuningKey[];

export const backfillSchema = z
  .object(Object.fromEntries(KEYS.map((k) => [BACKFILL_ENV[k], intIn(BACKFILL_LIMITS[k])])))
  .transform((v): { backfill: BackfillTuning } => ({
    backfill: Object.fromEntries(
      KEYS.flatMap((k) => (v[BACKFILL_ENV[k]] === undefined ? [] : [[k, v[BACKFILL_ENV[k]]]])),
    ),
  }));
