/**
 * Scheduled exports across the upgrade from legacy through dual to events_only, on real
 * PostgreSQL, ClickHouse and S3 (Versity Gateway). Data is written at known times in past windows;
 * the export job then runs as the worker of each stage would (the clock set to after the windows),
 * and the bucket must hold one file per closed window with exactly the rows sent in it. The legacy
 * source writes nothing once the deployment runs events_only and says why; the enriched source
 * needs the version 4 read path. A pass cut short between a window's write and its checkpoint
 * neither skips nor duplicates a window, and a real `observatory worker` runs the job on its own.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExportPass } from '../../server/features/exports/job.ts';
import { loadConfig } from '../../server/kernel/config/env.ts';
import { s3BlobStore } from '../../server/platform/blobs/s3.ts';
import type { BlobStore } from '../../server/platform/blobs/store.ts';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { api, eventually, type ModeServer } from '../conformance/env.ts';
import { ensurePyArrow } from '../conformance/python-sdks.ts';
import {
  createProject,
  type Env,
  MODE_ENV,
  type Mode,
  startWebPerMode,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';

const BUCKET = 'exports';
const PREFIX = 'exports/';
const HOUR = 3_600_000;
const SETUP_TIMEOUT_MS = 1_200_000;
/** The first export window: five whole hours ago. */
const T0 = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;

let stores: Stores & Given<{ redis: true; buckets: string[] }>;
let webs: Record<Mode, WebServer>;
let base: Env;
let project: Omit<ModeServer, 'url'>;
let blobs: BlobStore;
let analytics: ClickHouseClient;
let pyarrow: string;
const at = (mode: Mode): ModeServer => ({ url: webs[mode].url, ...project });

beforeAll(async () => {
  [stores, pyarrow] = await Promise.all([
    startStores({ redis: true, buckets: [BUCKET] }),
    ensurePyArrow((line) => process.stderr.write(`${line}\n`)),
  ]);
  base = { ...stores.env, ...stores.s3.env('export', BUCKET, PREFIX) };
  webs = await startWebPerMode(base);
  project = await createProject(base, 'exports');
  blobs = s3BlobStore(loadConfig(base).exportStorage!);
  analytics = createAnalyticsClient({ url: stores.ch.url });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  blobs?.close();
  await analytics?.close();
  await stopStores(stores, ...Object.values(webs ?? {}));
});

interface Sent {
  name: string;
  traceId: string;
  spanId: string;
  scoreId: string;
  time: number;
}

/** A one-span trace (OTLP with the version 4 header: in dual it lands in the legacy tables and events_full) and a score, at `time`. */
async function sendAt(s: ModeServer, time: number, name: string): Promise<Sent> {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  const nanos = BigInt(time) * 1_000_000n;
  const span = {
    traceId,
    spanId,
    name,
    kind: 1,
    startTimeUnixNano: String(nanos),
    endTimeUnixNano: String(nanos + 5_000_000n),
  };
  const res = await fetch(`${s.url}/api/public/otel/v1/traces`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${s.publicKey}:${s.secretKey}`).toString('base64')}`,
      'content-type': 'application/json',
      'x-service-ingestion-version': '4',
    },
    body: JSON.stringify({
      resourceSpans: [{ resource: {}, scopeSpans: [{ scope: { name: 'exports' }, spans: [span] }] }],
    }),
  });
  expect(res.status, await res.text()).toBe(200);
  const scoreId = `score-${spanId}`;
  const score = await api(s, 'POST', '/api/public/scores', {
    id: scoreId,
    traceId,
    name: `${name}-quality`,
    value: 0.5,
    timestamp: new Date(time).toISOString(),
  });
  expect(score.status, JSON.stringify(score.body)).toBeLessThan(300);
  return { name, traceId, spanId, scoreId, time };
}

interface ExportWire {
  id: string;
  checkpoint: string;
  windowsWritten: number;
  rowsWritten: number;
  lastSkipReason: string | null;
  files: string[];
}

const createExport = (s: ModeServer, body: Record<string, unknown>) =>
  api<ExportWire>(s, 'POST', '/api/public/exports', body);
const getExport = async (s: ModeServer, id: string) =>
  (await api<ExportWire>(s, 'GET', `/api/public/exports/${id}`)).body;

async function objectText(key: string): Promise<string> {
  const out = await stores.s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return out.Body!.transformToString();
}
const jsonl = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, string>);
/** The ids column of a CSV export (no field here holds a comma or quote). */
const csvColumn = (text: string, column: string) => {
  const [header, ...lines] = text.trim().split('\r\n');
  const i = header!.split(',').indexOf(column);
  return lines.map((l) => l.split(',')[i]);
};
const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '').replace('.000Z', 'Z');
const fileOf = (id: string, source: string, w: number, ext: string) =>
  `${PREFIX}${project.projectId}/${id}/${source}/${stamp(T0 + w * HOUR)}_${stamp(T0 + (w + 1) * HOUR)}.${ext}`;

const pass = (mode: Mode, now: number, store: BlobStore = blobs) =>
  runExportPass({
    pool: stores.pool,
    analytics,
    blobs: store,
    storagePrefix: PREFIX,
    settings: loadConfig({ ...MODE_ENV[mode] }).mode,
    now: () => now,
  });

/** What the upgrade walk sent, in order; the later tests export the same windows again. */
const sent: Sent[] = [];

describe('an export per source across the upgrade', () => {
  const ids = { legacy: '', scores: '', enriched: '' };

  it('legacy: the legacy and scores sources are accepted, the enriched one is refused', async () => {
    const s = at('legacy');
    const legacy = await createExport(s, {
      source: 'LEGACY_TRACES_OBSERVATIONS',
      format: 'JSONL',
      frequency: 'hourly',
      startAt: new Date(T0 + 1).toISOString(),
    });
    expect(legacy.status, JSON.stringify(legacy.body)).toBe(201);
    expect(legacy.body.checkpoint).toBe(new Date(T0).toISOString());
    const scores = await createExport(s, {
      source: 'SCORES',
      format: 'CSV',
      frequency: 'hourly',
      startAt: new Date(T0).toISOString(),
    });
    expect(scores.status).toBe(201);
    const enriched = await createExport(s, {
      source: 'ENRICHED_OBSERVATIONS',
      format: 'JSONL',
      frequency: 'hourly',
    });
    expect(enriched.status).toBe(400);
    expect((enriched.body as unknown as { error: string }).error).toMatch(/^source: enriched observations/);
    ids.legacy = legacy.body.id;
    ids.scores = scores.body.id;

    sent.push(
      await sendAt(at('dual'), T0 + 10 * 60_000, 'w0-a'),
      await sendAt(at('dual'), T0 + 50 * 60_000, 'w0-b'),
    );
    sent.push(await sendAt(at('dual'), T0 + HOUR + 5 * 60_000, 'w1'));
    const result = await pass('legacy', T0 + HOUR + 60_000);
    expect(result).toMatchObject({ windowsWritten: 2, skipped: [] });

    const rows = jsonl(await objectText(fileOf(ids.legacy, 'legacy_traces_observations', 0, 'jsonl')));
    expect(rows.map((r) => [r['kind'], r['id']]).sort()).toEqual(
      sent
        .slice(0, 2)
        .flatMap((x) => [
          ['observation', x.spanId],
          ['trace', x.traceId],
        ])
        .sort(),
    );
    expect(csvColumn(await objectText(fileOf(ids.scores, 'scores', 0, 'csv')), 'id').sort()).toEqual(
      sent
        .slice(0, 2)
        .map((x) => x.scoreId)
        .sort(),
    );
  });

  it('dual: the enriched source starts; every source writes the windows that closed', async () => {
    const enriched = await createExport(at('dual'), {
      source: 'ENRICHED_OBSERVATIONS',
      format: 'JSONL',
      frequency: 'hourly',
      startAt: new Date(T0).toISOString(),
    });
    expect(enriched.status, JSON.stringify(enriched.body)).toBe(201);
    ids.enriched = enriched.body.id;
    sent.push(await sendAt(at('dual'), T0 + 2 * HOUR + 5 * 60_000, 'w2'));
    const result = await pass('dual', T0 + 3 * HOUR + 60_000);
    // legacy: windows 1, 2; scores: 1, 2; enriched: 0, 1, 2.
    expect(result).toMatchObject({ windowsWritten: 7, skipped: [] });
    const enrichedIds = async (w: number) =>
      jsonl(await objectText(fileOf(ids.enriched, 'enriched_observations', w, 'jsonl'))).map((r) => r['id']);
    expect((await enrichedIds(0)).sort()).toEqual(
      sent
        .slice(0, 2)
        .map((x) => x.spanId)
        .sort(),
    );
    expect(await enrichedIds(1)).toEqual([sent[2]!.spanId]);
    const legacyW2 = jsonl(await objectText(fileOf(ids.legacy, 'legacy_traces_observations', 2, 'jsonl')));
    expect(legacyW2.map((r) => r['id']).sort()).toEqual([sent[3]!.spanId, sent[3]!.traceId].sort());
  });

  it('events_only: the legacy source writes nothing and says why; the others go on', async () => {
    const s = at('events_only');
    expect(
      (await createExport(s, { source: 'LEGACY_TRACES_OBSERVATIONS', format: 'CSV', frequency: 'daily' }))
        .status,
    ).toBe(400);
    sent.push(await sendAt(s, T0 + 3 * HOUR + 5 * 60_000, 'w3'));
    const result = await pass('events_only', T0 + 5 * HOUR + 60_000);
    expect(result.skipped).toEqual([
      { exportId: ids.legacy, reason: expect.stringMatching(/no longer written after the cutover/) },
    ]);
    // scores: 3, 4; enriched: 3, 4 (window 4 is empty: an empty file says the window was exported).
    expect(result.windowsWritten).toBe(4);
    const legacy = await getExport(s, ids.legacy);
    expect(legacy.checkpoint).toBe(new Date(T0 + 3 * HOUR).toISOString());
    expect(legacy.lastSkipReason).toMatch(/events_only/);
    expect(legacy.files).toEqual(
      [0, 1, 2].map((w) => fileOf(ids.legacy, 'legacy_traces_observations', w, 'jsonl')),
    );
    expect((await getExport(s, ids.enriched)).files).toEqual(
      [0, 1, 2, 3, 4].map((w) => fileOf(ids.enriched, 'enriched_observations', w, 'jsonl')),
    );
    expect(
      jsonl(await objectText(fileOf(ids.enriched, 'enriched_observations', 3, 'jsonl'))).map((r) => r['id']),
    ).toEqual([sent[4]!.spanId]);
    expect(await objectText(fileOf(ids.scores, 'scores', 4, 'csv'))).toBe('');
  });
});

interface ParquetFile {
  rows: number;
  schema: Record<string, string>;
  data: Record<string, unknown>[];
}

/** The objects at `keys` as PyArrow reads them. */
async function readParquet(keys: string[]): Promise<ParquetFile[]> {
  const dir = await mkdtemp(join(tmpdir(), 'parquet-'));
  try {
    const paths = await Promise.all(
      keys.map(async (key, i) => {
        const out = await stores.s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
        expect(out.ContentType).toBe('application/vnd.apache.parquet');
        const path = join(dir, `${i}.parquet`);
        await writeFile(path, await out.Body!.transformToByteArray());
        return path;
      }),
    );
    const script = join(import.meta.dirname, '../conformance/python/read_parquet.py');
    const { stdout } = await promisify(execFile)(pyarrow, [script, ...paths], {
      timeout: 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return JSON.parse(stdout) as ParquetFile[];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** PyArrow prints a UTC timestamp with or without its zone, depending on how the column was tagged. */
const msOf = (iso: unknown) => Date.parse(/Z|[+-]\d\d:\d\d$/.test(String(iso)) ? String(iso) : `${iso}Z`);
const inWindow = (w: number) => sent.filter((x) => x.time >= T0 + w * HOUR && x.time < T0 + (w + 1) * HOUR);
const byId = (a: { id: unknown }, b: { id: unknown }) => String(a.id).localeCompare(String(b.id));

describe('Parquet', () => {
  it('an unknown format is refused naming the field', async () => {
    const res = await createExport(at('events_only'), {
      source: 'SCORES',
      format: 'XML',
      frequency: 'hourly',
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/format/);
  });

  it('each source writes typed Parquet files holding exactly the rows sent in each window', async () => {
    const create = async (mode: Mode, source: string) => {
      const res = await createExport(at(mode), {
        source,
        format: 'PARQUET',
        frequency: 'hourly',
        startAt: new Date(T0).toISOString(),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id;
    };
    // Dual serves all three sources (the legacy one still written, events_full behind the preview).
    const legacy = await create('dual', 'LEGACY_TRACES_OBSERVATIONS');
    const enriched = await create('dual', 'ENRICHED_OBSERVATIONS');
    const scores = await create('dual', 'SCORES');
    await pass('dual', T0 + 5 * HOUR + 60_000);
    const windows = [0, 1, 2, 3, 4];

    const enrichedFiles = await readParquet(
      windows.map((w) => fileOf(enriched, 'enriched_observations', w, 'parquet')),
    );
    expect(enrichedFiles[0]!.schema).toMatchObject({ id: 'string', trace_id: 'string', name: 'string' });
    expect(enrichedFiles[0]!.schema['start_time']).toMatch(/^timestamp\[/);
    for (const w of windows) {
      const file = enrichedFiles[w]!;
      expect(file.rows).toBe(file.data.length);
      expect(
        file.data
          .map((r) => ({
            id: r['id'],
            trace_id: r['trace_id'],
            name: r['name'],
            start: msOf(r['start_time']),
          }))
          .sort(byId),
      ).toEqual(
        inWindow(w)
          .map((x) => ({ id: x.spanId, trace_id: x.traceId, name: x.name, start: x.time }))
          .sort(byId),
      );
    }

    const legacyFiles = await readParquet(
      windows.map((w) => fileOf(legacy, 'legacy_traces_observations', w, 'parquet')),
    );
    for (const w of windows) {
      expect(
        legacyFiles[w]!.data.map((r) => ({
          kind: r['kind'],
          id: r['id'],
          trace_id: r['trace_id'],
          name: r['name'],
          start: msOf(r['start_time']),
        })).sort(byId),
      ).toEqual(
        inWindow(w)
          // The last trace was sent in events_only: it never reached the legacy tables.
          .filter((x) => sent.indexOf(x) < 4)
          .flatMap((x) => [
            { kind: 'trace', id: x.traceId, trace_id: x.traceId, name: x.name, start: x.time },
            { kind: 'observation', id: x.spanId, trace_id: x.traceId, name: x.name, start: x.time },
          ])
          .sort(byId),
      );
    }

    const scoreFiles = await readParquet(windows.map((w) => fileOf(scores, 'scores', w, 'parquet')));
    expect(scoreFiles[0]!.schema['value']).toBe('double');
    for (const w of windows) {
      expect(
        scoreFiles[w]!.data.map((r) => ({
          id: r['id'],
          trace_id: r['trace_id'],
          name: r['name'],
          value: r['value'],
          at: msOf(r['timestamp']),
        })).sort(byId),
      ).toEqual(
        inWindow(w)
          .map((x) => ({
            id: x.scoreId,
            trace_id: x.traceId,
            name: `${x.name}-quality`,
            value: 0.5,
            at: x.time,
          }))
          .sort(byId),
      );
    }
    const recorded = await getExport(at('dual'), enriched);
    expect(recorded).toMatchObject({ windowsWritten: 5, rowsWritten: sent.length });
  });
});

describe('a pass cut short', () => {
  it('between a window’s write and its checkpoint: the next pass rewrites that window, skips none', async () => {
    const s = at('events_only');
    const created = await createExport(s, {
      source: 'SCORES',
      format: 'JSONL',
      frequency: 'hourly',
      startAt: new Date(T0).toISOString(),
    });
    const id = created.body.id;
    // The storage of a worker that dies right after its second upload of this export.
    let uploads = 0;
    const dying: BlobStore = {
      ...blobs,
      async put(key, body, type) {
        await blobs.put(key, body, type);
        if (key.includes(id) && ++uploads === 2) throw new Error('worker killed');
      },
    };
    const now = T0 + 5 * HOUR + 60_000;
    await expect(pass('events_only', now, dying)).rejects.toThrow('worker killed');
    const cut = await getExport(s, id);
    expect(cut.checkpoint).toBe(new Date(T0 + HOUR).toISOString());
    expect(cut.files).toHaveLength(2);

    await pass('events_only', now);
    const done = await getExport(s, id);
    expect(done.checkpoint).toBe(new Date(T0 + 5 * HOUR).toISOString());
    expect(done.windowsWritten).toBe(5);
    expect(done.files).toEqual([0, 1, 2, 3, 4].map((w) => fileOf(id, 'scores', w, 'jsonl')));
    const scoreIds = (await Promise.all(done.files.map(objectText))).flatMap((t) =>
      jsonl(t).map((r) => r['id']),
    );
    // Every score sent into these windows, each exactly once.
    expect(scoreIds.sort()).toEqual(sent.map((x) => x.scoreId).sort());
  });
});

describe('the worker', () => {
  it('runs the exports itself', async () => {
    const s = at('events_only');
    const created = await createExport(s, {
      source: 'SCORES',
      format: 'CSV',
      frequency: 'hourly',
      startAt: new Date(T0).toISOString(),
    });
    const worker = await startWorker({
      ...base,
      ...MODE_ENV.events_only,
      SERVICE_EXPORT_INTERVAL_SECONDS: '1',
      SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
    });
    try {
      const done = await eventually(
        `export ${created.body.id} written by the worker`,
        async () => {
          const e = await getExport(s, created.body.id);
          return e.windowsWritten >= 5 ? e : undefined;
        },
        60_000,
      );
      expect(done.files.slice(0, 5)).toEqual(
        [0, 1, 2, 3, 4].map((w) => fileOf(created.body.id, 'scores', w, 'csv')),
      );
    } finally {
      await worker.stop();
    }
  });
});
