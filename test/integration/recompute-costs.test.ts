/**
 * `observatory recompute-costs` in each write mode on real PostgreSQL and the ClickHouse engine:
 * generations sent through `@langfuse/otel` 5.x are priced by a project definition; the project
 * then changes its prices and overrides a built-in model; the CLI, killed mid-way and run again,
 * resumes from its checkpoint and leaves every table that holds cost (legacy `observations`,
 * `events_full`, `events_core`) with the new cost and model id, field by field, read with SQL, with
 * no row duplicated and the SDK-sent cost untouched. A second run finds nothing to change. In dual,
 * a batch-ingested generation is recomputed in staging too, for propagation to carry.
 */
import { spawn } from 'node:child_process';
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { startObservation } from '@langfuse/tracing';
import { Langfuse } from 'langfuse';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv } from '../../cluster/observatory-cli.ts';
import { observatoryCli } from '../../cluster/paths.ts';
import { bounded, eventually } from '../conformance/env.ts';
import { type Body, callApi, MODES, modeWebsForSuite } from '../fixtures/mode-webs.ts';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';
import { cli, MODE_ENV, type Mode } from '../fixtures/service.ts';

const env = modeWebsForSuite('recompute');
const { webs, projects } = env;
let ch: ClickHouseClient;
let pool: pg.Pool;
beforeAll(() => {
  ch = createClient({ url: env.base['CLICKHOUSE_URL']!, log: { level: ClickHouseLogLevel.OFF } });
  pool = new pg.Pool({ connectionString: env.base['DATABASE_URL']!, max: 2 });
});
afterAll(async () => {
  await Promise.all([ch?.close(), pool?.end()]);
});

const GPT_4O_ID = 'b9854a5c92dc496b997d99d20';
const ACME = 30;
const acmeUsage = (i: number) => ({ input: 100 + i, output: 10 });

const ALL_TABLES = ['observations', 'observations_batch_staging', 'events_full', 'events_core'] as const;
/** Tables each mode must have written generations to (dual may also write events directly). */
const WRITES: Record<Mode, string[]> = {
  legacy: ['observations'],
  dual: ['observations'],
  events_only: ['events_full', 'events_core'],
};

interface Stored {
  id: string;
  modelId: string | null;
  costDetails: Record<string, number>;
  totalCost: number | null;
}

async function stored(table: string, projectId: string): Promise<Map<string, Stored>> {
  const legacy = table.startsWith('observations');
  const rs = await ch.query({
    query: `SELECT ${legacy ? 'id' : 'span_id'} AS id, ${legacy ? 'internal_model_id' : 'model_id'} AS model_id,
              cost_details, total_cost FROM ${table} FINAL
            WHERE project_id = {p:String} AND ifNull(provided_model_name, '') != ''`,
    query_params: { p: projectId },
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_decimals: 0 },
  });
  const rows = await rs.json<{
    id: string;
    model_id: string | null;
    cost_details: Record<string, number>;
    total_cost: number | null;
  }>();
  return new Map(
    rows.map((r) => [
      r.id,
      { id: r.id, modelId: r.model_id || null, costDetails: r.cost_details, totalCost: r.total_cost },
    ]),
  );
}

/** Physical rows (no FINAL): an in-place update keeps their number. */
async function physicalRows(table: string, projectId: string): Promise<number> {
  const rs = await ch.query({
    query: `SELECT count() AS n FROM ${table} WHERE project_id = {p:String}`,
    query_params: { p: projectId },
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ n: string }>())[0]!.n);
}

const expectCost = (actual: Record<string, number>, expected: Record<string, number>) => {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  for (const [k, v] of Object.entries(expected)) expect(actual[k], k).toBeCloseTo(v, 12);
};

describe.each(MODES)('%s', (mode) => {
  const call = (method: string, path: string, body?: unknown) =>
    callApi(webs[mode], projects[mode], method, path, body);
  const cliEnvOf = () => ({
    ...env.base,
    ...MODE_ENV[mode],
    // The events tables take lightweight updates in one mode, mutations in the others.
    ...(mode === 'events_only' ? { COLUMNAR_USE_LIGHTWEIGHT_UPDATE: 'true' } : {}),
  });
  const from = new Date(Date.now() - 3600_000).toISOString();
  const to = new Date(Date.now() + 3600_000).toISOString();
  const args = () => [
    'recompute-costs',
    '--from',
    from,
    '--to',
    to,
    '--project',
    projects[mode].projectId,
    '--json',
  ];
  const sent: { acme: string[]; gpt: string; own: string } = { acme: [], gpt: '', own: '' };
  let acmeV1 = '';
  /** The tables holding this mode's generations. */
  let tables: string[] = [];

  it('prices generations with the definitions at ingestion', async () => {
    const created = await call('POST', '/api/public/models', {
      modelName: 'acme-recompute',
      matchPattern: '(?i)^acme-recompute$',
      unit: 'TOKENS',
      inputPrice: 1e-6,
      outputPrice: 2e-6,
    });
    expect(created.status).toBe(200);
    acmeV1 = String(created.body['id']);
    await withSdkTracer(projects[mode], webs[mode].url, () => {
      for (let i = 0; i < ACME; i++) {
        const g = startObservation(
          'llm',
          { model: 'acme-recompute', usageDetails: acmeUsage(i) },
          { asType: 'generation' },
        );
        g.end();
        sent.acme.push(g.id);
      }
      const gpt = startObservation(
        'llm',
        { model: 'gpt-4o', usageDetails: { input: 1000, output: 500 } },
        { asType: 'generation' },
      );
      gpt.end();
      sent.gpt = gpt.id;
      const own = startObservation(
        'llm',
        {
          model: 'acme-recompute',
          usageDetails: { input: 5, output: 5 },
          costDetails: { input: 0.5, output: 0.25 },
        },
        { asType: 'generation' },
      );
      own.end();
      sent.own = own.id;
    });
    await eventually(
      `${mode} writes`,
      async () => {
        const r = await Promise.all(WRITES[mode].map((t) => stored(t, projects[mode].projectId)));
        return r.every((m) => m.size === ACME + 2) ? r : undefined;
      },
      30_000,
    );
    const counts = await Promise.all(ALL_TABLES.map((t) => physicalRows(t, projects[mode].projectId)));
    tables = ALL_TABLES.filter((_, i) => counts[i]! > 0);
    expect(tables).toEqual(expect.arrayContaining(WRITES[mode]));
    if (mode === 'events_only') expect(tables).not.toContain('observations');
    for (const table of tables) {
      const rows = await eventually(
        `${mode} ${table} rows`,
        async () => {
          const r = await stored(table, projects[mode].projectId);
          return r.size === ACME + 2 ? r : undefined;
        },
        30_000,
      );
      const first = rows.get(sent.acme[0]!)!;
      expect(first.modelId).toBe(acmeV1);
      expectCost(first.costDetails, { input: 100e-6, output: 20e-6, total: 120e-6 });
      expect(rows.get(sent.gpt)!.modelId).toBe(GPT_4O_ID);
    }
  });

  it('recomputes with new definitions, resumes after a kill, duplicates nothing, keeps sent costs', async () => {
    // New prices: acme's definition replaced, and gpt-4o overridden by the project.
    expect((await call('DELETE', `/api/public/models/${acmeV1}`)).status).toBe(200);
    const acmeV2 = await call('POST', '/api/public/models', {
      modelName: 'acme-recompute',
      matchPattern: '(?i)^acme-recompute$',
      unit: 'TOKENS',
      inputPrice: 3e-6,
      outputPrice: 5e-6,
    });
    const gptOwn = await call('POST', '/api/public/models', {
      modelName: 'gpt-4o',
      matchPattern: '(?i)^(openai/)?(gpt-4o)$',
      unit: 'TOKENS',
      inputPrice: 1e-5,
      outputPrice: 2e-5,
    });
    expect([acmeV2.status, gptOwn.status]).toEqual([200, 200]);
    const projectId = projects[mode].projectId;
    const before = await Promise.all(tables.map((t) => physicalRows(t, projectId)));
    const sentBefore = await Promise.all(tables.map(async (t) => (await stored(t, projectId)).get(sent.own)));
    // The legacy table is one source, the events tables another (events_core follows events_full).
    const sources = (tables.includes('observations') ? 1 : 0) + (tables.includes('events_full') ? 1 : 0);

    // Killed once its checkpoint shows some batches done and it has not finished.
    const child = spawn(process.execPath, [observatoryCli, ...args(), '--batch-size', '1'], {
      env: cliEnv(cliEnvOf()),
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const progress = await eventually(
      'a checkpoint',
      async () => {
        const { rows } = await pool.query<{ examined: string; finished: boolean }>(
          'SELECT examined, finished_at IS NOT NULL AS finished FROM cost_recomputations WHERE project_id = $1',
          [projectId],
        );
        return rows[0] && Number(rows[0].examined) >= 3 ? rows[0] : undefined;
      },
      60_000,
    );
    child.kill('SIGKILL');
    await exited;
    expect(progress.finished).toBe(false);

    const resumed = await cli([...args(), '--batch-size', '4'], cliEnvOf());
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = JSON.parse(resumed.stdout) as Body;
    // The resumed run goes on from the checkpoint: what the killed one did is not examined again.
    expect(result).toMatchObject({ resumed: true, projectId, examined: (ACME + 1) * sources });

    for (const [i, table] of tables.entries()) {
      expect(await physicalRows(table, projectId), `${table} rows`).toBe(before[i]);
      const rows = await stored(table, projectId);
      sent.acme.forEach((id, n) => {
        const r = rows.get(id)!;
        const u = acmeUsage(n);
        expect(r.modelId, `${table} ${id}`).toBe(acmeV2.body['id']);
        const cost = {
          input: u.input * 3e-6,
          output: u.output * 5e-6,
          total: u.input * 3e-6 + u.output * 5e-6,
        };
        expectCost(r.costDetails, cost);
        expect(r.totalCost).toBeCloseTo(cost.total, 12);
      });
      const gpt = rows.get(sent.gpt)!;
      expect(gpt.modelId).toBe(gptOwn.body['id']);
      expectCost(gpt.costDetails, { input: 0.01, output: 0.01, total: 0.02 });
      // The cost the SDK sent stays, whatever the definitions say.
      expect(rows.get(sent.own)).toEqual(sentBefore[i]);
      expect(sentBefore[i]!.costDetails).toMatchObject({ input: 0.5, output: 0.25 });
    }

    // Done: the same range again starts over and finds every row already right.
    const again = await cli(args(), cliEnvOf());
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      resumed: false,
      examined: (ACME + 1) * sources,
      updated: 0,
    });
  });
});

describe('dual: a batch-ingested generation staged for propagation', () => {
  it('is recomputed in the legacy table and in staging, so propagation carries the new cost', async () => {
    const p = projects.dual;
    const call = (method: string, path: string, body?: unknown) => callApi(webs.dual, p, method, path, body);
    const model = { modelName: 'acme-staged', matchPattern: '(?i)^acme-staged$', unit: 'TOKENS' };
    const v1 = await call('POST', '/api/public/models', { ...model, inputPrice: 1e-6, outputPrice: 1e-6 });
    const lf = new Langfuse({ publicKey: p.publicKey, secretKey: p.secretKey, baseUrl: webs.dual.url });
    const trace = lf.trace({ name: 'staged' });
    const gen = trace.generation({ name: 'llm', model: 'acme-staged', usage: { input: 1000, output: 100 } });
    gen.end();
    await bounded('langfuse 3.x shutdown', lf.shutdownAsync(), 30_000);
    const tables = ['observations', 'observations_batch_staging'];
    await eventually(
      'the staged generation',
      async () => {
        const rows = await Promise.all(tables.map((t) => stored(t, p.projectId)));
        return rows.every((r) => r.get(gen.id)?.modelId === v1.body['id']) ? rows : undefined;
      },
      30_000,
    );
    expect((await call('DELETE', `/api/public/models/${v1.body['id']}`)).status).toBe(200);
    const v2 = await call('POST', '/api/public/models', { ...model, inputPrice: 2e-6, outputPrice: 4e-6 });
    const before = await Promise.all(tables.map((t) => physicalRows(t, p.projectId)));
    const now = Date.now();
    const run = await cli(
      [
        'recompute-costs',
        '--from',
        new Date(now - 3600_000).toISOString(),
        '--to',
        new Date(now + 3600_000).toISOString(),
        '--project',
        p.projectId,
      ],
      { ...env.base, ...MODE_ENV.dual },
    );
    expect(run.code, run.stderr).toBe(0);
    for (const [i, table] of tables.entries()) {
      expect(await physicalRows(table, p.projectId), table).toBe(before[i]);
      const r = (await stored(table, p.projectId)).get(gen.id)!;
      expect(r.modelId, table).toBe(v2.body['id']);
      expectCost(r.costDetails, { input: 0.002, output: 0.0004, total: 0.0024 });
      expect(r.totalCost, table).toBeCloseTo(0.0024, 12);
    }
  });
});
