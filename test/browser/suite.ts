/**
 * What most browser suites start with, so a test file starts with what it tests: PostgreSQL and
 * the analytics server, `observatory web` in `events_only` (with Redis and a worker when the suite
 * needs the worker's jobs), Debian's chromium, one project and the people who use it.
 */
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { type RedisFixture, startRedis } from '../fixtures/redis.ts';
import {
  type AnalyticsServer,
  createProject,
  type Env,
  MODE_ENV,
  type Project,
  startAnalyticsServer,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { createUiUser } from '../fixtures/ui-client.ts';
import { type Chromium, closeSuite, startChromium } from './chromium.ts';

/** A person of the suite's project, signed in through the form with these credentials. */
export interface Person {
  userId: string;
  email: string;
  password: string;
}

export interface BrowserSuiteOptions<P extends string> {
  /** The project's name. */
  project: string;
  /** Each person by the name the tests use: their email and their role in the project. */
  people: Record<P, { email: string; role: 'owner' | 'admin' | 'member' | 'viewer' }>;
  /** Redis and a worker beside the web (queues, alerts, evaluations, deletion). */
  worker?: boolean;
  /** More settings for the web and the worker. */
  env?: Env;
}

export interface BrowserSuite<P extends string> {
  /** The environment the web and the worker run with (and the CLI commands take). */
  env: Env;
  pg: PostgresFixture;
  ch: AnalyticsServer;
  redis: RedisFixture | undefined;
  web: WebServer;
  worker: WebServer | undefined;
  chromium: Chromium;
  project: Project;
  people: Record<P, Person>;
}

type Stoppable = { stop(): Promise<unknown> } | undefined;

/**
 * Closes the browser, the processes, the stores and `more` (what the test started beside the
 * suite), even after a failed step or a suite that never started; what the browser's guard
 * blocked and the pages' uncaught errors.
 */
export async function closeBrowserSuite(
  suite: BrowserSuite<string> | undefined,
  ...more: Stoppable[]
): Promise<{ blocked: string[]; errors: string[] }> {
  const left = await closeSuite(
    suite?.chromium,
    [suite?.web, suite?.worker],
    [...more, suite?.ch, suite?.pg, suite?.redis],
  );
  return left ?? { blocked: [], errors: [] };
}

export async function startBrowserSuite<P extends string>(
  options: BrowserSuiteOptions<P>,
): Promise<BrowserSuite<P>> {
  // What started is stopped again when a later part fails to start.
  const started: Stoppable[] = [];
  const start = async <T extends Stoppable>(p: Promise<T>): Promise<T> => {
    const it = await p;
    started.push(it);
    return it;
  };
  try {
    const [pg, ch, redis] = await Promise.all([
      start(startPostgres()),
      start(startAnalyticsServer()),
      options.worker ? start(startRedis()) : undefined,
    ]);
    const env: Env = {
      DATABASE_URL: pg.url,
      CLICKHOUSE_URL: ch.url,
      ...(redis ? { REDIS_URL: redis.url } : {}),
      ...MODE_ENV.events_only,
      ...options.env,
    };
    const web = await start(startWeb(env));
    const [worker, chromium, project] = await Promise.all([
      options.worker ? start(startWorker(env)) : undefined,
      startChromium().then((c) => {
        started.push({ stop: () => c.close() });
        return c;
      }),
      createProject(env, options.project),
    ]);
    const named = Object.entries(options.people) as [P, { email: string; role: string }][];
    const created = await Promise.all(
      named.map(([, p]) => createUiUser(env, p.email, ['--project', project.projectId, '--role', p.role])),
    );
    const people = Object.fromEntries(named.map(([name], i) => [name, created[i]!])) as Record<P, Person>;
    return { env, pg, ch, redis, web, worker, chromium, project, people };
  } catch (err) {
    await Promise.allSettled(started.reverse().map((s) => s?.stop()));
    throw err;
  }
}
