/**
 * The ingestion log's replay as `observatory ingestion replay` and `observatory restore` run it:
 * the log's bucket, its queue and the analytics store from the process's configuration, opened for
 * the replay and closed after it (a restore opens them only once the databases are restored).
 */

import { openDatastores } from '../app/runtime/datastores.ts';
import { traceDeletionDeps } from '../features/deletion/traces.ts';
import { type ReplayProgress, type ReplayWindow, replayLog } from '../features/ingestion/log/replay.ts';
import { ModelCatalog } from '../features/models/catalog.ts';
import { ingestionTombstones } from '../features/tombstones/record.ts';
import { pgEntityLocks } from '../features/write-model/entity-locks.ts';
import { clickhouseStore } from '../features/write-model/store.ts';
import type { S3Settings } from '../kernel/config/blob-storage.ts';
import type { ServiceConfig } from '../kernel/config/env.ts';
import { s3BlobStore } from '../platform/blobs/s3.ts';

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
