/**
 * Schema migrations through the real CLI on real stores: up to 47, down to 37 and up again; a
 * second up changes nothing; release 3 starts on 37 and refuses on 47 with the reference's
 * message; and the start-up configuration table on the real `observatory web` process.
 */
import pgLib from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueue, markDrained } from '../../server/features/ingestion/log/queue.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { type AnalyticsServer, cli, type Env, startAnalyticsServer, startWeb } from '../fixtures/service.ts';

let pg: PostgresFixture;
let ch: AnalyticsServer;
let base: Env;

beforeAll(async () => {
  [pg, ch] = await Promise.all([startPostgres(), startAnalyticsServer()]);
  base = { DATABASE_URL: pg.url, CLICKHOUSE_URL: ch.url };
});
afterAll(async () => {
  await Promise.all([ch?.stop(), pg?.stop()]);
});

async function tables(): Promise<string[]> {
  const rs = await ch.client.query({
    query:
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND name NOT LIKE '.inner%' ORDER BY name",
    format: 'JSONEachRow',
  });
  return (await rs.json<{ name: string }>()).map((r) => r.name);
}

async function status(env: Env = base) {
  const r = await cli(['migrate', 'status', '--json'], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { analytics: { version: number; dirty: boolean } };
}

const V3_TABLES = [
  'event_log',
  'project_environments',
  'dataset_run_items',
  'traces',
  'observations',
  'scores',
  'dataset_run_items_rmt',
];
const V4_TABLES = ['observations_batch_staging', 'events_full', 'events_core', 'events_core_mv'];

describe('migrations', () => {
  it('walk up to 47, down to 37 and up again, each idempotent', async () => {
    const up = await cli(['migrate', 'up'], base);
    expect(up.code, up.stderr).toBe(0);
    expect((await status()).analytics).toEqual(expect.objectContaining({ version: 47, dirty: false }));
    let t = await tables();
    for (const name of V4_TABLES) expect(t).toContain(name);
    for (const name of ['event_log', 'project_environments', 'dataset_run_items'])
      expect(t).not.toContain(name);

    const again = await cli(['migrate', 'up'], base);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('up to date');
    expect(await tables()).toEqual(t);

    const down = await cli(['migrate', 'down', '--to', '37'], base);
    expect(down.code, down.stderr).toBe(0);
    expect((await status()).analytics.version).toBe(37);
    t = await tables();
    for (const name of V3_TABLES) expect(t).toContain(name);
    for (const name of V4_TABLES) expect(t).not.toContain(name);

    const up2 = await cli(['migrate', 'up'], base);
    expect(up2.code, up2.stderr).toBe(0);
    expect((await status()).analytics.version).toBe(47);
  });

  it('release 3 refuses a schema at 47 naming the version, and starts once rewound to 37', async () => {
    const release3 = { ...base, SERVICE_RELEASE: '3' };
    const refused = await cli(['web'], release3);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('no migration was found for version 47');

    expect((await cli(['migrate', 'down', '--to', '37'], base)).code).toBe(0);
    const web = await startWeb(release3);
    const health = (await (await fetch(`${web.url}/api/public/health`)).json()) as { version: string };
    expect(health.version).toMatch(/^3\./);
    await web.stop();
    expect((await status(release3)).analytics.version).toBe(37);
    expect((await cli(['migrate', 'up'], base)).code).toBe(0);
  });

  it('down waits for the ingestion log: refused while a write accepted before it is not drained', async () => {
    const created = await cli(['create-project', '--name', 'logged', '--json'], base);
    expect(created.code, created.stderr).toBe(0);
    const { projectId } = JSON.parse(created.stdout) as { projectId: string };
    const pool = new pgLib.Pool({ connectionString: pg.url, max: 1 });
    try {
      const key = `ingestion-log/v1/pending-${projectId}.json`;
      await enqueue(pool, [{ key, projectId, receivedAt: Date.now(), bytes: 10 }]);
      const refused = await cli(['migrate', 'down', '--to', '37', '--log-wait-seconds', '2'], base);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('waiting for 1 writes of the ingestion log to be drained');
      expect(refused.stderr.trim().split('\n').at(-1)).toBe(
        'observatory migrate: the analytics schema was not rewound: 1 writes accepted before it are still in the ingestion log, not in the analytics store (is a worker draining the log?)',
      );
      expect((await status()).analytics.version).toBe(47);
      await markDrained(pool, [key]);
      const down = await cli(['migrate', 'down', '--to', '37', '--log-wait-seconds', '2'], base);
      expect(down.code, down.stderr).toBe(0);
      expect((await status()).analytics.version).toBe(37);
      expect((await cli(['migrate', 'up'], base)).code).toBe(0);
    } finally {
      await pool.end();
    }
  });

  it('refuses usage errors with exit code 2', async () => {
    expect((await cli(['migrate', 'down'], base)).code).toBe(2);
    expect((await cli(['migrate', 'sideways'], base)).code).toBe(2);
    expect((await cli(['migrate', 'up', '--to', '48'], base)).stderr).toContain(
      'no migration was found for version 48',
    );
  });
});

const MODE = 'SERVICE_MIGRATION_V4_WRITE_MODE';
const OTEL = 'SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR';
const PREVIEW = 'SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN';
const BACKFILL = 'SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL';

/**
 * Every combination of the four settings, with the message each invalid one must print (the spec's
 * rules: events_only needs direct and the preview opt-in; legacy needs the backfill off).
 */
const combos = ['legacy', 'dual', 'events_only'].flatMap((mode) =>
  ['dual_write', 'direct'].flatMap((otel) =>
    ['true', 'false'].flatMap((preview) =>
      ['true', 'false'].map((backfill) => {
        const problems: string[] = [];
        if (mode === 'events_only' && otel === 'dual_write')
          problems.push(`${MODE}=events_only requires ${OTEL}=direct`);
        if (mode === 'events_only' && preview === 'false')
          problems.push(`${MODE}=events_only requires ${PREVIEW}=true`);
        if (mode === 'legacy' && backfill === 'true')
          problems.push(`${MODE}=legacy requires ${BACKFILL}=false`);
        return { env: { [MODE]: mode, [OTEL]: otel, [PREVIEW]: preview, [BACKFILL]: backfill }, problems };
      }),
    ),
  ),
);

describe('start-up configuration of observatory web', () => {
  it.each(combos.filter((c) => c.problems.length > 0))('refuses %j', async ({ env, problems }) => {
    // A refusal comes at start, in seconds; a web that starts instead is killed well before the test's timeout.
    const r = await cli(['web'], { ...base, ...env, SERVICE_AUTO_MIGRATION_DISABLED: 'true' }, 30_000);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    for (const p of problems) expect(lines[0]).toContain(p);
  });

  it.each(combos.filter((c) => c.problems.length === 0))('starts with %j', async ({ env }) => {
    const web = await startWeb({ ...base, ...env, SERVICE_AUTO_MIGRATION_DISABLED: 'true' });
    expect((await fetch(`${web.url}/api/public/ready`)).status).toBe(200);
    await web.stop();
  });
});
