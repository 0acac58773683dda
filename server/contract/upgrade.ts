/**
 * Upgrades between images of release 4 (e.g. 4.1 -> 4.2): the preflight Job of the new image
 * reports, in its container's termination message, the schema versions it knows and the oldest it
 * can migrate from; the operator refuses a skip its migrations cannot bridge before any Job beyond
 * that preflight runs. Both sides read the rule from here.
 */
import { z } from 'zod';

/** What the preflight of an image reports of the analytics schema. */
export const schemaReportSchema = z.object({
  /** The version the database is at, as the Job found it (0: empty). */
  database: z.number().int().min(0),
  /** The newest version the image's migrations reach. */
  latest: z.number().int().min(0),
  /** The oldest database version the image's migrations start from (older needs an image between). */
  upgradableFrom: z.number().int().min(0),
});
export type SchemaReport = z.infer<typeof schemaReportSchema>;

/** The preflight Job's termination message: its verdict and the schema report. */
export const preflightSummarySchema = z.object({
  ok: z.boolean(),
  schema: schemaReportSchema,
});
export type PreflightSummary = z.infer<typeof preflightSummarySchema>;

/**
 * Why the image of `r` must not migrate the database, or undefined when it may. An empty database
 * starts from any image's first migration; a database older than the image's oldest starting point
 * needs an image in between (migrations that require order are not skipped); a database newer than
 * the image knows would make its processes refuse to start.
 */
export function upgradeRefusal(r: SchemaReport): string | undefined {
  if (r.database === 0) return undefined;
  if (r.database < r.upgradableFrom)
    return `the database is at schema version ${r.database}, older than ${r.upgradableFrom}, the oldest this image migrates from: upgrade through an image whose migrations start at or below ${r.database} first`;
  if (r.database > r.latest)
    return `the database is at schema version ${r.database}, newer than ${r.latest}, the newest this image knows: its processes would not start on it`;
  return undefined;
}
