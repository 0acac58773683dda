/**
 * Concurrent batches changing one trace or observation lose nothing. The npm `langfuse` 3.x SDK
 * with `flushAt: 1` sends the trace-create and every update in its own request, all at once; each
 * request reads the stored row, merges its fields and writes the row back. The rows read back are
 * compared, field by field, with what the SDK sent, in each write mode. A second test holds one
 * request between its read and its write while another request for the same trace runs.
 */
import { Langfuse } from 'langfuse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V4_DEFAULTS, type WriteMode } from '../../server/contract/write-modes.ts';
import { processBatch } from '../../server/features/ingestion/batch.ts';
import { ingestionTombstones } from '../../server/features/tombstones/record.ts';
import { pgEntityLocks } from '../../server/features/write-model/entity-locks.ts';
import { jsonText } from '../../server/features/write-model/records.ts';
import { clickhouseStore, type IngestionStore } from '../../server/features/write-model/store.ts';
import { chTime } from '../../server/features/write-model/time.ts';
import {
  createProject,
  MODE_ENV,
  type Mode,
  type Project,
  startWebPerMode,
  type WebServer,
} from '../fixtures/service.ts';
import { type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';

// biome-ignore lint/suspicious/noExplicitAny: rows read back from the store are compared field by field
type StoreRow = Record<string, any>;

const MODES = Object.keys(MODE_ENV) as Mode[];
const WAIT_MS = 30_000;

let stores: Stores;
const webs = {} as Record<Mode, WebServer>;
const projects = {} as Record<Mode, Project>;

beforeAll(async () => {
  stores = await startStores();
  Object.assign(webs, await startWebPerMode(stores.env));
  for (const mode of MODES) projects[mode] = await createProject(stores.env, `race-${mode}`);
}, 300_000);

afterAll(async () => {
  await Promise.all(Object.values(webs).map((w) => w.stop()));
  await stopStores(stores);
});

async function select(query: string, params: Record<string, unknown>): Promise<StoreRow[]> {
  const rs = await stores.ch.client.query({
    query,
    query_params: params,
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
  return rs.json<StoreRow>();
}

const rowsById = (table: string, projectId: string, ids: string[]) =>
  select(
    `SELECT * FROM ${table} FINAL WHERE project_id = {p:String} AND id IN {ids:Array(String)} ORDER BY id`,
    { p: projectId, ids },
  );

/** Settles within WAIT_MS or fails naming what hung. */
async function bounded<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${WAIT_MS} ms`)), WAIT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

interface SentEvent {
  type: string;
  body: Record<string, unknown>;
}

/**
 * One trace through the SDK: created with its input, then one update per field (name, metadata,
 * tags, user, output) and a span created, updated and ended; every event is its own request.
 */
function traceThroughSdk(sdk: Langfuse, id: string): void {
  const trace = sdk.trace({ id, input: { q: id } });
  trace.update({ name: `${id}-name` });
  trace.update({ metadata: { owner: `${id}-owner`, n: 1 } });
  trace.update({ tags: ['b', 'a'] });
  trace.update({ userId: `${id}-user` });
  trace.update({ output: { a: id } });
  const span = trace.span({ id: `${id}-span`, name: 'step', input: 'step-in' });
  span.update({ output: 'step-out', metadata: { k: 'v' } });
  span.end();
}

/** The stored trace the spec expects from the SDK's events: every field any event set. */
function expectedTrace(id: string, projectId: string, sent: SentEvent[]) {
  const events = sent.filter((e) => e.type === 'trace-create' && e.body['id'] === id);
  const field = (name: string) => events.map((e) => e.body[name]).find((v) => v !== undefined && v !== null);
  return {
    row: {
      id,
      project_id: projectId,
      name: field('name'),
      user_id: field('userId'),
      metadata: { owner: `${id}-owner`, n: '1' },
      release: null,
      version: null,
      environment: 'default',
      public: false,
      bookmarked: false,
      tags: ['a', 'b'],
      input: jsonText(field('input')),
      output: jsonText(field('output')),
      session_id: null,
      is_deleted: 0,
    },
    // Every update re-sends the trace's timestamp; the row holds one of them.
    timestamps: events.map((e) => chTime(e.body['timestamp'] as string | Date)),
  };
}

function expectedSpan(id: string, traceId: string, projectId: string, sent: SentEvent[]) {
  const events = sent.filter((e) => e.type.startsWith('span-') && e.body['id'] === id);
  const end = events.map((e) => e.body['endTime']).find((v) => v !== undefined);
  return {
    id,
    trace_id: traceId,
    project_id: projectId,
    type: 'SPAN',
    parent_observation_id: null,
    name: 'step',
    input: 'step-in',
    output: 'step-out',
    metadata: { k: 'v' },
    end_time: chTime(end as string | Date),
    level: 'DEFAULT',
    is_deleted: 0,
  };
}

describe('the langfuse 3.x SDK with flushAt 1: every update in its own concurrent request', () => {
  it.each(MODES)(
    '%s: the stored rows hold every field the SDK sent',
    async (mode) => {
      const project = projects[mode];
      const sdk = new Langfuse({
        publicKey: project.publicKey,
        secretKey: project.secretKey,
        baseUrl: webs[mode].url,
        flushAt: 1,
      });
      const sent: SentEvent[] = [];
      sdk.on('flush', (items: SentEvent[]) => sent.push(...items));
      const ids = [1, 2, 3, 4].map((i) => `race-${mode}-${i}-${Date.now()}`);
      for (const id of ids) traceThroughSdk(sdk, id);
      await bounded('langfuse 3.x shutdownAsync', sdk.shutdownAsync());
      // 4 traces x (create + 5 updates + span create, update, end), each sent on its own.
      expect(sent).toHaveLength(36);

      const traces = await rowsById('traces', project.projectId, ids);
      const spans = await rowsById(
        'observations',
        project.projectId,
        ids.map((id) => `${id}-span`),
      );
      if (mode === 'events_only') {
        // Batch trace events are refused in events_only: nothing is written, nothing can race.
        expect([traces, spans]).toEqual([[], []]);
        expect(
          await select('SELECT * FROM events_full WHERE trace_id IN {ids:Array(String)}', { ids }),
        ).toEqual([]);
        return;
      }
      expect(traces.map((t) => t['id'])).toEqual([...ids].sort());
      for (const row of traces) {
        const want = expectedTrace(row['id'], project.projectId, sent);
        expect(row, row['id']).toMatchObject(want.row);
        expect(want.timestamps).toContain(row['timestamp']);
      }
      for (const row of spans)
        expect(row, row['id']).toMatchObject(
          expectedSpan(row['id'], row['trace_id'], project.projectId, sent),
        );
      expect(spans).toHaveLength(ids.length);

      if (mode === 'dual') {
        // The staged virtual root carries the merged trace, so propagation writes it whole.
        const roots = await rowsById(
          'observations_batch_staging',
          project.projectId,
          ids.map((id) => `t-${id}`),
        );
        expect(roots).toHaveLength(ids.length);
        for (const root of roots) {
          const trace = traces.find((t) => `t-${t['id']}` === root['id'])!;
          expect(root).toMatchObject({
            name: trace['name'],
            metadata: trace['metadata'],
            input: trace['input'],
            output: trace['output'],
            start_time: trace['timestamp'],
            parent_observation_id: null,
          });
        }
        const staged = await rowsById(
          'observations_batch_staging',
          project.projectId,
          ids.map((id) => `${id}-span`),
        );
        for (const row of staged)
          expect(row).toMatchObject(expectedSpan(row['id'], row['trace_id'], project.projectId, sent));
      }
    },
    120_000,
  );
});

/** Resolves once `probe` is true; polls every 20 ms, fails after WAIT_MS naming `what`. */
async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${WAIT_MS} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A store whose trace read calls `afterRead` before handing back the rows. */
function withReadHook(inner: IngestionStore, afterRead: () => Promise<void>): IngestionStore {
  return {
    ...inner,
    async fetchEntities(projectId, traceIds, observationIds) {
      const rows = await inner.fetchEntities(projectId, traceIds, observationIds);
      if (traceIds.length > 0) await afterRead();
      return rows;
    },
  };
}

const waitingAdvisoryLocks = async () =>
  (
    await stores.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
    )
  ).rows[0]!.n;

describe('a request held between its read and its write', () => {
  it.each(['legacy', 'dual'] as const)(
    '%s: the other request for the same trace and span merges onto its write',
    async (mode: WriteMode) => {
      const projectId = projects[mode as Mode].projectId;
      const settings = {
        ...V4_DEFAULTS,
        release: '4' as const,
        writeMode: mode,
        nativeOtelBehaviour: 'dual_write' as const,
        enableHistoricBackfill: false,
      };
      const store = clickhouseStore(stores.ch.client, {
        useLightweightUpdate: false,
        clusterEnabled: false,
        clusterName: 'default',
      });
      // Two web processes: each has its own in-process queue, so they meet at PostgreSQL's lock.
      const [firstProcess, secondProcess] = [pgEntityLocks(stores.pool), pgEntityLocks(stores.pool)];
      const tombstones = ingestionTombstones({
        pool: stores.pool,
        analytics: stores.ch.client,
        release: '4',
        dialect: { cluster: false, clusterName: 'default' },
      });
      const attribution = { apiKey: 'pk', sdkName: 'javascript', sdkVersion: '3.39.2' };
      const id = `held-${mode}-${Date.now()}`;
      const at = new Date().toISOString();
      const event = (eid: string, type: string, body: object) => ({ id: eid, type, timestamp: at, body });

      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      let firstRead = false;
      const first = processBatch(
        [
          event('a1', 'trace-create', { id, timestamp: at, name: 'held-name' }),
          event('a2', 'span-create', { id: `${id}-span`, traceId: id, name: 'step', startTime: at }),
        ],
        {
          projectId,
          settings,
          attribution,
          locks: firstProcess,
          tombstones,
          store: withReadHook(store, async () => {
            firstRead = true;
            await held;
          }),
        },
      );
      await until('the first request read the trace', async () => firstRead);

      let secondRead = false;
      const second = processBatch(
        [
          event('b1', 'trace-create', { id, userId: 'held-user', tags: ['x'] }),
          event('b2', 'span-update', { id: `${id}-span`, traceId: id, output: 'out' }),
        ],
        {
          projectId,
          settings,
          attribution,
          locks: secondProcess,
          tombstones,
          store: withReadHook(store, async () => {
            secondRead = true;
          }),
        },
      );
      // The second request either waits for the first one's lock or (unserialised) reads too.
      await until(
        'the second request waits for the lock or reads',
        async () => secondRead || (await waitingAdvisoryLocks()) > 0,
      );
      release();
      const results = await bounded('both requests', Promise.all([first, second]));
      for (const r of results) expect(r.errors).toEqual([]);

      const [trace] = await rowsById('traces', projectId, [id]);
      expect(trace).toMatchObject({
        name: 'held-name',
        user_id: 'held-user',
        tags: ['x'],
        timestamp: chTime(at),
      });
      const [span] = await rowsById('observations', projectId, [`${id}-span`]);
      expect(span).toMatchObject({ name: 'step', output: 'out', start_time: chTime(at), trace_id: id });
      if (mode === 'dual') {
        const [root] = await rowsById('observations_batch_staging', projectId, [`t-${id}`]);
        expect(root).toMatchObject({ name: 'held-name', start_time: chTime(at) });
      }
    },
    60_000,
  );
});
