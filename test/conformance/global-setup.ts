/**
 * Once for the conformance project: installs the public Python SDKs (cached), then starts the
 * service in each write mode on shared datastores (PostgreSQL, Redis, the analytics server), one
 * web per mode and the worker for `dual` (propagation fast enough for a test run), with a project
 * per mode. Test files read the addresses and keys through `inject('conformance')`.
 */
import type { TestProject } from 'vitest/node';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { type RedisFixture, startRedis } from '../fixtures/redis.ts';
import {
  type AnalyticsServer,
  createProject,
  MODE_ENV,
  startAnalyticsServer,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { type ConformanceEnv, MODES, type Mode } from './env.ts';
import { ensurePythonSdk, PYTHON_SDK_VERSIONS } from './python-sdks.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    conformance: ConformanceEnv;
  }
}

export const PROPAGATION_ENV = {
  SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '2',
  SERVICE_EVENT_PROPAGATION_GRACE_SECONDS: '2',
  SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
};

export default async function setup(project: TestProject) {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const started = Date.now();
  // Two installs at a time: pip is mostly waiting on the network.
  const queue = [...PYTHON_SDK_VERSIONS];
  const installs = Promise.all(
    [0, 1].map(async () => {
      for (let v = queue.shift(); v !== undefined; v = queue.shift()) await ensurePythonSdk(v, log);
    }),
  );

  let pg: PostgresFixture | undefined;
  let redis: RedisFixture | undefined;
  let ch: AnalyticsServer | undefined;
  const servers: WebServer[] = [];
  const teardown = async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all([ch?.stop(), pg?.stop(), redis?.stop()]);
  };
  try {
    [pg, redis, ch] = await Promise.all([startPostgres(), startRedis(), startAnalyticsServer()]);
    const base = { DATABASE_URL: pg.url, CLICKHOUSE_URL: ch.url, REDIS_URL: redis.url };
    // The first web applies the migrations; the others start on the migrated schema.
    const legacy = await startWeb({ ...base, ...MODE_ENV.legacy });
    servers.push(legacy);
    const [dual, eventsOnly, worker] = await Promise.all([
      startWeb({ ...base, ...MODE_ENV.dual }),
      startWeb({ ...base, ...MODE_ENV.events_only }),
      startWorker({ ...base, ...MODE_ENV.dual, ...PROPAGATION_ENV }),
    ]);
    servers.push(dual, eventsOnly, worker);
    const urls: Record<Mode, string> = { legacy: legacy.url, dual: dual.url, events_only: eventsOnly.url };
    const env = { workerUrl: worker.url, modes: {} } as ConformanceEnv;
    for (const mode of MODES) {
      env.modes[mode] = { url: urls[mode], ...(await createProject(base, `conformance-${mode}`)) };
    }
    log(
      `conformance: service up in ${Math.round((Date.now() - started) / 1000)} s; waiting for the SDK installs`,
    );
    await installs;
    project.provide('conformance', env);
  } catch (err) {
    await installs.catch(() => {});
    await teardown();
    throw err;
  }
  return teardown;
}
