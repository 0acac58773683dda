/**
 * `observatory web`: the web container. Applies pending migrations unless
 * SERVICE_AUTO_MIGRATION_DISABLED=true, refuses to start on a schema newer than it knows, then
 * serves the public API on HOST:PORT (default 0.0.0.0:3000) until SIGTERM; `/metrics` there too, or
 * on HOST:METRICS_PORT alone when that is set; OTLP over gRPC on HOST:SERVICE_OTLP_GRPC_PORT (4317).
 */
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { openDatastores } from '../app/runtime/datastores.ts';
import { encryptionKeyProblem } from '../app/runtime/encryption-key.ts';
import { createLogger } from '../app/runtime/logger.ts';
import { onShutdown } from '../app/runtime/shutdown.ts';
import { buildWebApp } from '../app/web/app.ts';
import type { WebContext } from '../app/web/core/context.ts';
import { metricPointsTally } from '../app/web/core/request-metrics.ts';
import { otlpGrpcHandlers } from '../app/web/otlp-grpc/handlers.ts';
import { startOtlpGrpc } from '../app/web/otlp-grpc/server.ts';
import { PORTS } from '../contract/ports.ts';
import { traceDeletionDeps } from '../features/deletion/traces.ts';
import { backlogGate, blobIngestionLog } from '../features/ingestion/log/log.ts';
import { backlog } from '../features/ingestion/log/queue.ts';
import { MaskingCatalog } from '../features/masking/catalog.ts';
import { ModelCatalog } from '../features/models/catalog.ts';
import { BUILT_IN_PRICE_FILE, readPriceFile } from '../features/models/price-file.ts';
import { loadBuiltInModels } from '../features/models/store.ts';
import { warmTokenizers } from '../features/models/tokenize.ts';
import { ProducerRecorder } from '../features/producers/recorder.ts';
import { KeyVerifier } from '../features/projects/keys.ts';
import { ingestionTombstones } from '../features/tombstones/record.ts';
import { memorySignInThrottle, redisSignInThrottle, signInRules } from '../features/users/login-throttle.ts';
import { pgEntityLocks } from '../features/write-model/entity-locks.ts';
import { clickhouseStore } from '../features/write-model/store.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { s3BlobStore } from '../platform/blobs/s3.ts';
import { redisCoordination } from '../platform/coordination/store.ts';
import { createAnalyticsClient } from '../platform/datastores/clickhouse.ts';
import { statementBounds } from '../platform/datastores/statement-bounds.ts';
import { SchemaAheadError } from '../platform/migrations/analytics/runner.ts';
import { migratorsFor } from '../platform/migrations/schema.ts';

export async function run(_args: string[]): Promise<number> {
  const config = processConfig('web');
  const log = createLogger('web', config.logLevel);
  const stores = openDatastores(config, 'web');
  const migrators = migratorsFor(config, stores.pool, stores.analytics);
  try {
    if (!config.autoMigrationDisabled) {
      await migrators.relational.up();
      // Migrations may run far longer than a read: their own client, with the Jobs' bounds.
      const ddl = createAnalyticsClient(config.clickhouse, statementBounds('jobs', config.analyticsTimeouts));
      try {
        await migratorsFor(config, stores.pool, ddl).analytics.up(undefined, (line) => log.info(line));
      } finally {
        await ddl.close();
      }
    }
    await migrators.analytics.assertKnown();
    const keyProblem = await encryptionKeyProblem(stores.pool, config.llm);
    if (keyProblem) {
      await stores.close();
      process.stderr.write(`observatory web: ${keyProblem}\n`);
      return 2;
    }
    await loadBuiltInModels(stores.pool, readPriceFile(BUILT_IN_PRICE_FILE));
    // Only a web that writes the store before it answers prices what it accepts; behind the log the
    // drain does, and the encoders (about 120 MB of heap, 1.5 s of CPU to build) would sit unused.
    if (!config.ingestionLog.s3 || config.ingestionLog.waitForStore) warmTokenizers();
  } catch (err) {
    await stores.close();
    if (err instanceof SchemaAheadError) {
      process.stderr.write(`observatory web: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  let shuttingDown = false;
  const producers = config.mode.release === '4' ? new ProducerRecorder(stores.pool) : undefined;
  const mediaBlobs = config.media.s3 ? s3BlobStore(config.media.s3) : undefined;
  const exportBlobs = config.exportStorage ? s3BlobStore(config.exportStorage) : undefined;
  const logSettings = config.ingestionLog;
  const logBlobs = logSettings.s3 ? s3BlobStore(logSettings.s3) : undefined;
  const ingestionBacklog = logBlobs && backlogGate(() => backlog(stores.pool), logSettings);
  const ingestionLog =
    ingestionBacklog &&
    logBlobs &&
    blobIngestionLog({
      blobs: logBlobs,
      pool: stores.pool,
      prefix: logSettings.s3?.prefix ?? '',
      waitForStore: logSettings.waitForStore,
      onApplyFailed: (err) =>
        log.warn({ err: err.message }, 'write logged; the worker will write it to the store'),
      drainBehind: ingestionBacklog.behind,
    });
  const coordination = config.redisUrl ? redisCoordination(config.redisUrl) : undefined;
  // Sign-in limits count in Redis so every replica enforces one limit; without REDIS_URL, per process.
  const signInStore = config.redisUrl
    ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, connectTimeout: 2_000 })
    : undefined;
  signInStore?.on('error', () => {}); // reconnects on its own; a sign-in meeting it down answers 503
  const rules = signInRules(config.auth.signInLimitPerAccountAddress);
  const signIns = signInStore ? redisSignInThrottle(signInStore, rules) : memorySignInThrottle(rules);
  if (!signInStore) log.warn('no REDIS_URL: sign-in limits are counted per web process');
  const metricsApp = config.metricsPort === undefined ? undefined : Fastify({ logger: false });
  const models = new ModelCatalog(stores.pool);
  await models.warm();
  const registry = new Registry();
  const ctx: WebContext = {
    config,
    pool: stores.pool,
    analytics: stores.analytics,
    store: clickhouseStore(stores.analytics, config.clickhouse),
    locks: pgEntityLocks(stores.pool),
    tombstones: ingestionTombstones(traceDeletionDeps(config, stores)),
    ingestionLog,
    ingestionBacklog,
    keys: new KeyVerifier(stores.pool),
    masking: new MaskingCatalog(stores.pool),
    models,
    producers,
    mediaBlobs,
    exportBlobs,
    coordination,
    signIns,
    signInStore,
    metricPoints: metricPointsTally(registry),
    shuttingDown: () => shuttingDown,
  };
  const app = buildWebApp(ctx, {
    logger: log,
    maxInFlightWrites: config.maxInFlightWrites,
    registry,
    ...(metricsApp ? { metricsApp } : {}),
  });
  // Bound first: once the API answers ready (the Pod's probe), OTLP over gRPC is served too.
  const grpc =
    config.otlpGrpc.port === undefined
      ? undefined
      : await startOtlpGrpc(ctx, otlpGrpcHandlers(ctx), {
          host: config.host,
          port: config.otlpGrpc.port,
          tls: config.otlpGrpc.tls,
          maxInFlight: config.maxInFlightWrites,
        });
  await app.listen({ host: config.host, port: config.port ?? PORTS.web });
  await metricsApp?.listen({ host: config.host, port: config.metricsPort });
  log.info({ mode: config.mode, otlpGrpcPort: grpc?.port ?? null }, 'web ready');
  await onShutdown({
    onSignal: () => {
      shuttingDown = true;
    },
    drainMs: config.shutdownDrainSeconds * 1000,
    cleanup: async () => {
      await grpc?.close();
      await app.close();
      await metricsApp?.close();
      await producers?.close();
      mediaBlobs?.close();
      exportBlobs?.close();
      logBlobs?.close();
      await coordination?.close();
      signInStore?.disconnect();
      await stores.close();
    },
  });
  return 0;
}
