/**
 * `observatory worker`: the worker container. Runs the dual-write propagation while the write
 * mode writes the events tables (dual, and events_only to drain what is left), the historic
 * backfill chain when enabled, and the health endpoints on HOST:PORT (default 0.0.0.0:3030).
 * A worker starts even on a schema newer than it knows (as the reference's does) but then runs
 * no job against it.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { BackfillManager } from '../backfill/manager.ts';
import { loadConfig } from '../config/env.ts';
import { ENV } from '../contract/env.ts';
import { PORTS } from '../contract/ports.ts';
import { behaviourOf } from '../contract/write-modes.ts';
import { redisCoordination } from '../coordination/store.ts';
import { openDatastores } from '../runtime/datastores.ts';
import { createLogger } from '../runtime/logger.ts';
import { dialectOf, migratorsFor } from '../runtime/schema.ts';
import { drainMsFromEnv, onShutdown } from '../runtime/shutdown.ts';
import { buildWorkerApp } from '../worker/app.ts';
import { PropagationJob } from '../worker/propagation/job.ts';

export async function run(_args: string[]): Promise<number> {
  const config = loadConfig(process.env, { require: ['DATABASE_URL', 'CLICKHOUSE_URL', 'REDIS_URL'] });
  const log = createLogger('worker');
  const stores = openDatastores(config);
  const coordination = redisCoordination(config.redisUrl!);
  const behaviour = behaviourOf(config.mode);
  const workerId = `${hostname()}-${randomUUID().slice(0, 8)}`;

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const backlog = new Gauge({
    name: 'observatory_event_propagation_partition_backlog',
    help: 'Staging partitions not yet propagated to events_full',
    registers: [metrics],
  });
  const delay = new Gauge({
    name: 'observatory_event_propagation_last_processed_partition_delay_seconds',
    help: 'Seconds between the end of the last propagated partition and now',
    registers: [metrics],
  });

  const schema = await migratorsFor(config, stores.pool, stores.analytics)
    .analytics.assertKnown()
    .then(() => 'known' as const)
    .catch((err: Error) => {
      log.error({ err: err.message }, 'analytics schema is not usable by this release; jobs stay off');
      return 'unknown' as const;
    });

  const propagationEnabled = behaviour.runsPropagation && schema === 'known';
  const intervalSeconds = Number(process.env['SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS'] ?? 60);
  const propagation = propagationEnabled
    ? new PropagationJob({
        analytics: stores.analytics,
        coordination,
        log,
        workerId,
        intervalMs: intervalSeconds * 1000,
        graceSeconds: Number(process.env['SERVICE_EVENT_PROPAGATION_GRACE_SECONDS'] ?? 30),
        onMetrics: (m) => {
          backlog.set(m.backlog);
          if (m.lastProcessedDelaySeconds !== null) delay.set(m.lastProcessedDelaySeconds);
        },
      })
    : undefined;
  propagation?.start();

  // The chain also runs inside the worker, as the reference's does; the operator turns this off
  // and runs each step as a Job instead. Each pass runs whatever step is next and runnable.
  let shuttingDown = false;
  const chainInWorker = process.env[ENV.backgroundMigrationsInWorker] !== 'false' && schema === 'known';
  const backfill = new BackfillManager({
    pool: stores.pool,
    analytics: stores.analytics,
    dialect: dialectOf(config),
    settings: config.mode,
    workerId,
    log: (msg, fields) => log.info(fields ?? {}, msg),
  });
  let chainPass: Promise<void> = Promise.resolve();
  const chainTimer = chainInWorker
    ? setInterval(() => {
        chainPass = chainPass
          .then(() => backfill.runChain(() => shuttingDown))
          .catch((err: Error) => log.error({ err: err.message }, 'backfill pass failed'));
      }, 30_000)
    : undefined;

  const app = buildWorkerApp({
    pool: stores.pool,
    coordination,
    propagationEnabled,
    thresholdMinutes: config.propagationStuckThresholdMinutes,
    processStartedAt: Date.now(),
    shuttingDown: () => shuttingDown,
    metrics,
    backfillStatus: () => backfill.status(),
  });
  await app.listen({ host: config.host, port: config.port ?? PORTS.worker });
  log.info({ mode: config.mode, propagationEnabled, workerId }, 'worker ready');
  await onShutdown({
    onSignal: () => {
      shuttingDown = true;
    },
    drainMs: drainMsFromEnv(process.env),
    cleanup: async () => {
      clearInterval(chainTimer);
      await propagation?.stop();
      // A running chunk finishes or is abandoned; either way the step resumes from its checkpoint.
      await Promise.race([chainPass, new Promise((r) => setTimeout(r, 10_000))]);
      await app.close();
      await coordination.close();
      await stores.close();
    },
  });
  return 0;
}
