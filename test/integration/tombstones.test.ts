/**
 * A deleted trace stays deleted (issue #41, tombstones), tried as a user would on real stores:
 * history sent with the npm `langfuse` 3.x SDK in legacy, ten of its traces deleted with
 * `DELETE /api/public/traces` between backfill steps 2 and 3 (the scratch copy already holds their
 * observations), the chain run to its end as the operator's Jobs run it; and in events_only a late
 * OTLP span (an exporter's retry) carrying a deleted trace's id. Afterwards the Observations API v2
 * and the trace API answer exactly the traces that were kept, row by row, and each deletion's
 * tombstone is on record with its actor.
 */
import { randomBytes } from 'node:crypto';
import { Langfuse } from 'langfuse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillStep } from '../fixtures/backfill.ts';
import {
  basicAuth,
  createProject,
  type Env,
  LEGACY_ENV,
  type Project,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';
import { waitFor } from '../fixtures/wait.ts';

const TRACES = 14;
const DELETED = 10;
const MONTH_MS = 31 * 24 * 3600_000;
const EVENTS_ONLY = { SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only' } as const;

let stores: Stores & Given<{ redis: true }>;
let base: Env;
let legacy: WebServer;
let eventsOnly: WebServer;

beforeAll(async () => {
  stores = await startStores({ redis: true });
  // Redis is the worker's alone: the webs run without it.
  base = { DATABASE_URL: stores.pg.url, CLICKHOUSE_URL: stores.ch.url };
  legacy = await startWeb({ ...base, ...LEGACY_ENV });
  eventsOnly = await startWeb({ ...base, ...EVENTS_ONLY });
});

afterAll(async () => {
  await stopStores(stores, legacy, eventsOnly);
});

const hex = (n: number) => randomBytes(n).toString('hex');

async function call(url: string, p: Project, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: basicAuth(p),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** What the Observations API v2 answers for each of these traces: `trace/observation`, sorted. */
/**
 * Runs the trace deletion a delete call queued (its tombstones are recorded with the answer): a
 * worker of the web's mode takes it, and is stopped once the deletion succeeded (bounded wait).
 */
async function runDeletion(web: WebServer, env: Env, p: Project, answer: Record<string, unknown>) {
  const worker = await startWorker({
    ...base,
    ...env,
    REDIS_URL: stores.redis.url,
    SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
  });
  try {
    await waitFor(`trace deletion ${String(answer['deletionId'])}`, async () => {
      const res = await call(
        web.url,
        p,
        'GET',
        `/api/public/trace-deletions/${String(answer['deletionId'])}`,
      );
      return res.body['status'] === 'succeeded' ? true : undefined;
    });
  } finally {
    await worker.stop();
  }
}

async function observationsV2(p: Project, traceIds: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const traceId of traceIds) {
    const q = new URLSearchParams({ traceId, limit: '100' });
    const res = await call(eventsOnly.url, p, 'GET', `/api/public/v2/observations?${q}`);
    expect(res.status).toBe(200);
    for (const o of res.body['data'] as { traceId: string; id: string }[]) found.push(`${o.traceId}/${o.id}`);
  }
  return found.sort();
}

async function tombstonesOf(p: Project) {
  const { rows } = await stores.pool.query(
    `SELECT t.trace_id, k.public_key FROM trace_tombstones t LEFT JOIN api_keys k ON k.id = t.api_key_id
     WHERE t.project_id = $1 ORDER BY t.trace_id`,
    [p.projectId],
  );
  return rows;
}

describe('traces deleted between backfill steps 2 and 3 (npm langfuse 3.x, DELETE /api/public/traces)', () => {
  it('stay deleted once the chain has finished: Observations API v2 answers the kept traces only', async () => {
    const project = await createProject(base, 'tomb-backfill');
    const sdk = new Langfuse({
      publicKey: project.publicKey,
      secretKey: project.secretKey,
      baseUrl: legacy.url,
    });
    const ids = Array.from({ length: TRACES }, (_, i) => `hist-${i}-${hex(3)}`);
    for (const [i, id] of ids.entries()) {
      const at = new Date(Date.now() - (1 + (i % 2)) * MONTH_MS + i * 60_000);
      const trace = sdk.trace({ id, name: `historic-${i}`, timestamp: at, input: { i } });
      trace
        .span({ id: `${id}-span`, name: 'retrieve', startTime: at, endTime: new Date(at.getTime() + 400) })
        .generation({
          id: `${id}-gen`,
          name: 'llm',
          model: 'gpt-4o',
          startTime: at,
          endTime: new Date(at.getTime() + 300),
        });
    }
    await sdk.shutdownAsync();

    const step = async (n: number) => {
      const r = await backfillStep(
        {
          ...base,
          SERVICE_BACKFILL_CHUNK_ROWS: '5',
          SERVICE_BACKGROUND_MIGRATION_V4_DROP_PID_TID_SORTING_TABLES: 'true',
        },
        n,
      );
      expect(r.code, `backfill step ${n}: ${r.stderr}`).toBe(0);
    };
    await step(1);
    await step(2);
    const deleted = ids.slice(0, DELETED);
    const kept = ids.slice(DELETED);
    const res = await call(legacy.url, project, 'DELETE', '/api/public/traces', { traceIds: deleted });
    expect(res.status).toBe(200);
    await runDeletion(legacy, LEGACY_ENV, project, res.body);
    // The scratch copy step 2 made loses the deleted traces' observations at once.
    const scratch = await stores.ch.client.query({
      query:
        'SELECT DISTINCT trace_id FROM observations_pid_tid_sorting WHERE project_id = {p:String} ORDER BY trace_id',
      query_params: { p: project.projectId },
      format: 'JSONEachRow',
    });
    expect((await scratch.json<{ trace_id: string }>()).map((r) => r.trace_id)).toEqual([...kept].sort());
    for (const n of [3, 4, 5]) await step(n);

    expect(await observationsV2(project, ids)).toEqual(
      kept.flatMap((id) => [`${id}/${id}-gen`, `${id}/${id}-span`, `${id}/t-${id}`]).sort(),
    );
    for (const id of deleted) {
      expect((await call(eventsOnly.url, project, 'GET', `/api/public/traces/${id}`)).status).toBe(404);
    }
    expect(await tombstonesOf(project)).toEqual(
      [...deleted].sort().map((trace_id) => ({ trace_id, public_key: project.publicKey })),
    );
  });
});

describe('a late OTLP span of a deleted trace in events_only (an exporter retry)', () => {
  const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
  const nanos = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
  const span = (traceId: string, spanId: string, name: string, parentSpanId?: string) => ({
    traceId,
    spanId,
    ...(parentSpanId ? { parentSpanId } : {}),
    name,
    kind: 1,
    startTimeUnixNano: nanos(Date.now() - 5000),
    endTimeUnixNano: nanos(Date.now() - 4000),
    attributes: [str('langfuse.trace.name', 'request')],
  });
  const otlp = (p: Project, spans: unknown[]) =>
    fetch(`${eventsOnly.url}/api/public/otel/v1/traces`, {
      method: 'POST',
      headers: { authorization: basicAuth(p), 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [str('service.name', 'tomb-test')] },
            scopeSpans: [{ scope: { name: 'langfuse-sdk', version: '5.0.0' }, spans }],
          },
        ],
      }),
    });

  it('does not bring the trace back; a live trace in the same request is written', async () => {
    const project = await createProject(base, 'tomb-otlp');
    const [gone, live] = [hex(16), hex(16)];
    const [goneRoot, goneChild, liveRoot, lateSpan] = [hex(8), hex(8), hex(8), hex(8)];
    expect(
      (await otlp(project, [span(gone, goneRoot, 'root'), span(gone, goneChild, 'child', goneRoot)])).status,
    ).toBe(200);
    expect((await observationsV2(project, [gone])).length).toBe(2);
    const res = await call(eventsOnly.url, project, 'DELETE', `/api/public/traces/${gone}`);
    expect(res.status).toBe(200);
    await runDeletion(eventsOnly, EVENTS_ONLY, project, res.body);
    expect(await observationsV2(project, [gone])).toEqual([]);

    // The exporter retries the child, and another trace goes in through the same request.
    expect(
      (await otlp(project, [span(gone, lateSpan, 'retried', goneRoot), span(live, liveRoot, 'root')])).status,
    ).toBe(200);
    expect(await observationsV2(project, [gone, live])).toEqual([`${live}/${liveRoot}`]);
    expect((await call(eventsOnly.url, project, 'GET', `/api/public/traces/${gone}`)).status).toBe(404);
    expect(await tombstonesOf(project)).toEqual([{ trace_id: gone, public_key: project.publicKey }]);
  });
});
