/** The staging table's partitions (pure): the window `observations_batch_staging` groups rows by. */

/** Width of a staging partition (`toStartOfInterval(s3_first_seen_timestamp, INTERVAL 3 MINUTE)`). */
export const STAGING_WINDOW_MS = 3 * 60_000;

/** The end of the partition named by its start (`YYYY-MM-DD hh:mm:ss`, UTC), in ms. */
export function partitionEndMs(partition: string): number {
  return Date.parse(`${partition.replace(' ', 'T')}Z`) + STAGING_WINDOW_MS;
}
