/**
 * `observatory worker`: the worker container. Runs the dual-write propagation while the write
 * mode writes the events tables (dual, and events_only to drain what is left), the historic
 * backfill chain when enabled, and the health endpoints on HOST:PORT (default 0.0.0.0:3030).
 * A worker starts even on a schema newer than it knows (as the reference's does) but then runs
 * no job against it.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { openDatastores } from '../app/runtime/datastores.ts';
import { encryptionKeyProblem } from '../app/runtime/encryption-key.ts';
import { createLogger } from '../app/runtime/logger.ts';
import { onShutdown } from '../app/runtime/shutdown.ts';
import { buildWorkerApp } from '../app/worker/app.ts';
import { startWorkerJobs } from '../app/worker/jobs.ts';
import { workerMetrics } from '../app/worker/metrics.ts';
import { PORTS } from '../contract/ports.ts';
import { backlog } from '../features/ingestion/log/queue.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { s3BlobStore } from '../platform/blobs/s3.ts';
import { redisCoordination } from '../platform/coordination/store.ts';
import { migratorsFor } from '../platform/migrations/schema.ts';

export async function run(_args: string[]): Promise<number> {
  const config = processConfig('worker');
  const log = createLogger('worker', config.logLevel);
  const stores = openDatastores(config, 'worker');
  const coordination = redisCoordination(config.redisUrl!);
  const workerId = `${hostname()}-${randomUUID().slice(0, 8)}`;

  const metrics = workerMetrics();

  const keyProblem = await encryptionKeyProblem(stores.pool, config.llm).catch(() => undefined);
  if (keyProblem) {
    await coordination.close();
    await stores.close();
    process.stderr.write(`observatory worker: ${keyProblem}\n`);
    return 2;
  }
  const schema = await migratorsFor(config, stores.pool, stores.analytics)
    .analytics.assertKnown()
    .then(() => 'known' as const)
    .catch((err: Error) => {
      log.error({ err: err.message }, 'analytics schema is not usable by this release; jobs stay off');
      return 'unknown' as const;
    });

  const exportBlobs = config.exportStorage ? s3BlobStore(config.exportStorage) : undefined;
  // Retention deletes the media expired traces leave without a link.
  const mediaBlobs = config.media.s3 ? s3BlobStore(config.media.s3) : undefined;
  const ingestionLogBlobs = config.ingestionLog.s3 ? s3BlobStore(config.ingestionLog.s3) : undefined;
  const jobs = startWorkerJobs({
    config,
    pool: stores.pool,
    analytics: stores.analytics,
    coordination,
    log,
    workerId,
    schemaKnown: schema === 'known',
    exportBlobs,
    mediaBlobs,
    ingestionLogBlobs,
    onPropagationMetrics: metrics.onPropagation,
    onIngestionDrain: metrics.onIngestionDrain,
    onIngestionBacklog: metrics.onIngestionBacklog,
  });
  let shuttingDown = false;

  const app = buildWorkerApp({
    pool: stores.pool,
    coordination,
    propagationEnabled: jobs.propagationWatched,
    thresholdMinutes: config.propagationStuckThresholdMinutes,
    processStartedAt: Date.now(),
    shuttingDown: () => shuttingDown,
    metrics: metrics.registry,
    backfillStatus: () => jobs.backfill.status(),
    backfillStore: (steps) => jobs.backfill.storeReport(steps),
    // Read fresh rather than from the metrics' gauges, which a timer refreshes only with a log bucket.
    ingestionBacklog: async () => {
      const b = await backlog(stores.pool);
      return { pendingFiles: b.files, pendingBytes: b.bytes, oldestPendingAgeSeconds: b.oldestAgeSeconds };
    },
  });
  await app.listen({ host: config.host, port: config.port ?? PORTS.worker });
  log.info({ mode: config.mode, propagationEnabled: jobs.propagationEnabled, workerId }, 'worker ready');
  await onShutdown({
    onSignal: () => {
      shuttingDown = true;
      jobs.beginShutdown();
    },
    drainMs: config.shutdownDrainSeconds * 1000,
    cleanup: async () => {
      await jobs.stop();
      await app.close();
      await coordination.close();
      exportBlobs?.close();
      mediaBlobs?.close();
      ingestionLogBlobs?.close();
      await stores.close();
    },
  });
  return 0;
}
