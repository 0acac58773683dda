/**
 * The ingestion log's replay as `observatory ingestion replay` and `observatory restore` run it:
 * the log's bucket, its queue and the analytics store from the process's configuration, opened for
 * the replay and closed after it (a restore opens them only once the databases are restored).
 */
import { s3BlobStore } from '../blobs/s3.ts';
import type { S3Settings } from '../config/blob-storage.ts';
import type { ServiceConfig } from '../config/env.ts';
import { traceDeletionDeps } from '../deletion/traces.ts';
import { type ReplayProgress, type ReplayWindow, replayLog } from '../ingestion/log/replay.ts';
import { ModelCatalog } from '../models/catalog.ts';
import { openDatastores } from '../runtime/datastores.ts';
import { ingestionTombstones } from '../tombstones/record.ts';
import { pgEntityLocks } from '../write-model/entity-locks.ts';
import { clickhouseStore } from '../write-model/store.ts';

export async function replayConfiguredLog(
  config: ServiceConfig,
  s3: S3Settings,
  window: ReplayWindow,
  onProgress: (p: ReplayProgress) => void,
  maxStallMs?: number,
): Promise<ReplayProgress> {
  const stores = openDatastores(config, 'jobs');
  const blobs = s3BlobStore(s3);
  try {
    return await replayLog(
      {
        pool: stores.pool,
        blobs,
        prefix: s3.prefix,
        deps: {
          store: clickhouseStore(stores.analytics, config.clickhouse),
          locks: pgEntityLocks(stores.pool),
          tombstones: ingestionTombstones(traceDeletionDeps(config, stores)),
          models: new ModelCatalog(stores.pool),
        },
      },
      window,
      onProgress,
      maxStallMs,
    );
  } finally {
    blobs.close();
    await stores.close();
  }
}
