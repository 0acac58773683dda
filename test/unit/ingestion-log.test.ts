/**
 * The ingestion log's pure parts: key layout, the file format, the backlog bound, and the property
 * the drain rests on: writing many logged requests in one go gives the rows that writing them one
 * after another gives (what the web did before the log).
 */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { V4_DEFAULTS, type WriteMode } from '../../server/contract/write-modes.ts';
import { processBatch } from '../../server/features/ingestion/batch.ts';
import {
  decodeLogFile,
  encodeLogFile,
  hourFolder,
  hoursBetween,
  logKey,
  packLogFile,
  parseLogKey,
  readLogFile,
} from '../../server/features/ingestion/log/entry.ts';
import { backlogGate, backlogRefusal } from '../../server/features/ingestion/log/log.ts';
import type { Backlog } from '../../server/features/ingestion/log/queue.ts';
import { applyWrites, type IngestionWrite, runsOf } from '../../server/features/ingestion/write.ts';
import { LegacyChanges } from '../../server/features/write-model/changes.ts';
import type { EntityLocks } from '../../server/features/write-model/entity-locks.ts';
import type { Row } from '../../server/features/write-model/records.ts';
import { memoryStore, memoryTombstones } from '../fixtures/memory-store.ts';

const locks: EntityLocks = { hold: (_keys, work) => work() };
const settings = (writeMode: WriteMode) => ({
  ...V4_DEFAULTS,
  release: '4' as const,
  writeMode,
  nativeOtelBehaviour: 'dual_write' as const,
  enableHistoricBackfill: writeMode !== 'legacy',
});

describe('log keys', () => {
  const id = '0b7c6a8e-2f3d-4c1b-9a8e-1f2e3d4c5b6a';
  it.each([
    ['', 'p1', Date.UTC(2026, 11, 5, 9, 7, 1, 234), 'ingestion-log/v1/2026-12-05/09/p1/1796461621234-'],
    [
      'obs/',
      'a/b c',
      Date.UTC(2026, 0, 1, 0, 0, 0, 0),
      'obs/ingestion-log/v1/2026-01-01/00/a%2Fb%20c/1767225600000-',
    ],
  ])('prefix %j, project %j: %s', (prefix, projectId, receivedAt, start) => {
    const key = logKey(prefix, { projectId, receivedAt, id });
    expect(key).toBe(`${start}${id}.json.gz`);
    expect(key.startsWith(hourFolder(prefix, receivedAt, projectId))).toBe(true);
    expect(key.startsWith(hourFolder(prefix, receivedAt))).toBe(true);
    expect(parseLogKey(prefix, key)).toEqual({ projectId, receivedAt, id });
    // Files written before they were compressed keep their names.
    expect(parseLogKey(prefix, key.replace(/\.gz$/, ''))).toEqual({ projectId, receivedAt, id });
  });
  it.each([
    ['other/ingestion-log/v1/2026-12-05/09/p/1796461621234-x.json'],
    ['ingestion-log/v1/2026-12-05/09/p/notanumber-0b7c6a8e-2f3d-4c1b-9a8e-1f2e3d4c5b6a.json'],
    ['ingestion-log/v1/2026-12-05/09/p/1796461621234-0b7c6a8e-2f3d-4c1b-9a8e-1f2e3d4c5b6a.tmp'],
  ])('%s is not a log file', (key) => {
    expect(parseLogKey('', key)).toBeUndefined();
  });
  it('time sorts before project: an hour of every project is one listing', () => {
    const keys = [
      logKey('', { projectId: 'zz', receivedAt: Date.UTC(2026, 0, 1, 1), id }),
      logKey('', { projectId: 'aa', receivedAt: Date.UTC(2026, 0, 1, 2), id }),
    ];
    expect([...keys].sort()).toEqual(keys);
  });
  it.each([
    [Date.UTC(2026, 0, 1, 0, 30), Date.UTC(2026, 0, 1, 2, 0), [0, 1]],
    [Date.UTC(2026, 0, 1, 0, 30), Date.UTC(2026, 0, 1, 2, 1), [0, 1, 2]],
    [Date.UTC(2026, 0, 1, 3), Date.UTC(2026, 0, 1, 3), []],
  ])('hours of [%i, %i)', (from, to, hours) => {
    expect(hoursBetween(from, to)).toEqual(hours.map((h) => Date.UTC(2026, 0, 1, h)));
  });
});

describe('backlog bound', () => {
  const bounds = { backlogMaxAgeSeconds: 600, backlogMaxBytes: 1000 };
  it.each([
    [{ files: 0, bytes: 0, oldestAgeSeconds: 0, refused: 0 }, undefined],
    [{ files: 5, bytes: 1000, oldestAgeSeconds: 600, refused: 0 }, undefined],
    [
      { files: 5, bytes: 10, oldestAgeSeconds: 601, refused: 0 },
      /oldest pending write is 601 s old \(bound 600 s\)/,
    ],
    [{ files: 5, bytes: 1001, oldestAgeSeconds: 1, refused: 3 }, /1001 bytes pending \(bound 1000\)/],
  ])('%j: %s', (backlog, message) => {
    const refusal = backlogRefusal(backlog, bounds);
    if (message === undefined) expect(refusal).toBeUndefined();
    else {
      expect(refusal?.message).toMatch(message);
      expect(refusal?.retryAfterSeconds).toBeGreaterThan(0);
    }
  });
});

/** A small deterministic generator, so a failing seed can be run again. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Requests of one SDK against a few traces and observations: creates, updates, scores. */
function requests(seed: number, n: number) {
  const rnd = random(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const at = (i: number) => new Date(Date.UTC(2026, 11, 5, 10, 0, i)).toISOString();
  return Array.from({ length: n }, (_, r) =>
    Array.from({ length: 1 + Math.floor(rnd() * 4) }, (_, e) => {
      const t = pick(['t1', 't2', 't3']);
      const o = pick(['o1', 'o2', 'o3', 'o4']);
      const id = `r${r}e${e}`;
      const timestamp = at(r * 10 + e);
      const bodies = {
        'trace-create': { id: t, name: `n${r}`, tags: [`g${e}`], metadata: { [`k${r}`]: e } },
        'span-create': { id: o, traceId: t, name: `s${r}`, startTime: timestamp },
        'span-update': { id: o, traceId: t, output: `out${r}`, endTime: timestamp },
        'generation-create': { id: o, traceId: t, model: 'gpt-4o', usage: { input: r, output: e } },
        'score-create': { id: `sc${r}`, traceId: t, name: 'q', value: r },
      };
      const type = pick(Object.keys(bodies) as (keyof typeof bodies)[]);
      return { id, type, timestamp, body: bodies[type] };
    }),
  );
}

/**
 * What a reader sees: the newest row of each id per table, without the version columns and the
 * time a row was staged (the time of the write, which the propagation's partitions follow).
 */
function visible(rows: (t: string) => Row[]) {
  const out: Record<string, Record<string, Row>> = {};
  for (const table of ['traces', 'observations', 'scores', 'observations_batch_staging', 'events_full']) {
    const byId: Record<string, Row> = {};
    for (const r of rows(table)) {
      const { event_ts: _v, updated_at: _u, ...rest } = r;
      delete rest['s3_first_seen_timestamp'];
      byId[String(r['id'])] = rest;
    }
    out[table] = byId;
  }
  return out;
}

/** The writes the web logs for these requests (no store touched: the log only records them). */
async function logged(
  mode: WriteMode,
  reqs: unknown[][],
  sdkOf: (request: number) => string = () => 'python',
): Promise<IngestionWrite[]> {
  const writes: IngestionWrite[] = [];
  const log = { record: async (w: IngestionWrite) => void writes.push(w) };
  for (const [i, batch] of reqs.entries())
    await processBatch(batch, {
      projectId: 'p',
      settings: settings(mode),
      attribution: { apiKey: 'pk', sdkName: sdkOf(i), sdkVersion: '2.60.0' },
      store: memoryStore().store,
      locks,
      tombstones: memoryTombstones().tombstones,
      log,
      // A second apart: what each request creates is stamped with its own time.
      now: Date.UTC(2026, 11, 5, 10) + i * 1000,
    });
  return writes;
}

describe('the drain writes many logged requests as the web wrote them one by one', () => {
  const seeds = Array.from({ length: 12 }, (_, i) => 101 + i * 37);
  it.each((['legacy', 'dual'] as const).flatMap((mode) => seeds.map((seed) => [mode, seed] as const)))(
    '%s, seed %i',
    async (mode, seed) => {
      const writes = await logged(mode, requests(seed, 25));
      const oneByOne = memoryStore();
      for (const w of writes)
        await applyWrites([w], { store: oneByOne.store, locks, tombstones: memoryTombstones().tombstones });
      const drained = memoryStore();
      // Through the file format, as the drain reads them: files of one to four requests committed
      // together, in claims of a few files.
      const files: IngestionWrite[][] = [];
      for (let at = 0, size = 1; at < writes.length; at += size, size = 1 + (size % 4))
        files.push(decodeLogFile(encodeLogFile(writes.slice(at, at + size))));
      expect(files.flat()).toHaveLength(writes.length);
      for (let at = 0; at < files.length; at += 3)
        await applyWrites(files.slice(at, at + 3).flat(), {
          store: drained.store,
          locks,
          tombstones: memoryTombstones().tombstones,
        });
      expect(visible(drained.rows)).toEqual(visible(oneByOne.rows));
      // And a redelivery of every claim changes nothing a reader sees.
      await applyWrites(files.flat(), {
        store: drained.store,
        locks,
        tombstones: memoryTombstones().tombstones,
      });
      expect(visible(drained.rows)).toEqual(visible(oneByOne.rows));
    },
  );

  /** Two SDKs side by side: most of their traces their own, one trace and two spans shared. */
  const interleaved = (seed: number) => {
    const rnd = random(seed * 7);
    const sdks = requests(seed, 30).map(() => (rnd() < 0.5 ? 'python' : 'js'));
    const reqs = requests(seed, 30).map((batch, i) =>
      sdks[i] === 'js'
        ? JSON.parse(JSON.stringify(batch).replace(/"(t1|t2|o1|o2)"/g, (_, id: string) => `"js-${id}"`))
        : batch,
    );
    return { reqs, sdkOf: (i: number) => sdks[i]! };
  };

  it.each((['legacy', 'dual'] as const).flatMap((mode) => seeds.map((seed) => [mode, seed] as const)))(
    'interleaved producers, %s, seed %i',
    async (mode, seed) => {
      const { reqs, sdkOf } = interleaved(seed);
      const writes = await logged(mode, reqs, sdkOf);
      const oneByOne = memoryStore();
      for (const w of writes)
        await applyWrites([w], { store: oneByOne.store, locks, tombstones: memoryTombstones().tombstones });
      const drained = memoryStore();
      await applyWrites(writes, { store: drained.store, locks, tombstones: memoryTombstones().tombstones });
      expect(visible(drained.rows)).toEqual(visible(oneByOne.rows));
    },
  );

  /** A batch write of one trace, or (`span`) an OTLP write of one of its spans to events_full. */
  const write = (projectId: string, sdkName: string, traceId: string, span?: string) => {
    const changes = new LegacyChanges();
    if (!span) changes.addTrace(traceId, { id: traceId }, '2026-12-05T10:00:00.000Z');
    return {
      projectId,
      receivedAt: 0,
      attribution: { apiKey: 'k', sdkName, sdkVersion: '1' },
      targets: { legacy: true, staging: false, events: false },
      virtualRoots: true,
      changes,
      scores: [],
      events: span ? [{ project_id: projectId, trace_id: traceId, span_id: span }] : [],
    } satisfies IngestionWrite;
  };
  const runs = (ws: IngestionWrite[]) =>
    runsOf(ws).map((r) =>
      r.map(
        (w) =>
          `${w.projectId}/${w.attribution.sdkName}/${[...w.changes.traces.keys(), ...w.events.map((e) => `${e['trace_id']}.${e['span_id']}`)]}`,
      ),
    );

  it.each([
    {
      name: 'alike writes share a commit; another project or producer is a commit of its own',
      writes: [write('p', 'a', 't1'), write('p', 'a', 't2'), write('p', 'b', 't3'), write('q', 'b', 't4')],
      want: [['p/a/t1', 'p/a/t2'], ['p/b/t3'], ['q/b/t4']],
    },
    {
      name: 'interleaved producers of different traces: one commit per producer',
      writes: [write('p', 'a', 't1'), write('p', 'b', 't2'), write('p', 'a', 't3'), write('p', 'b', 't4')],
      want: [
        ['p/a/t1', 'p/a/t3'],
        ['p/b/t2', 'p/b/t4'],
      ],
    },
    {
      name: 'interleaved OTLP exporters: their spans of different traces, one commit per exporter',
      writes: [
        write('p', 'a', 't1', 's1'),
        write('p', 'b', 't2', 's2'),
        write('p', 'a', 't3', 's3'),
        write('p', 'b', 't4', 's4'),
      ],
      want: [
        ['p/a/t1.s1', 'p/a/t3.s3'],
        ['p/b/t2.s2', 'p/b/t4.s4'],
      ],
    },
    {
      name: 'a span of a trace another exporter wrote in between comes after it',
      writes: [write('p', 'a', 't1', 's1'), write('p', 'b', 't1', 's2'), write('p', 'a', 't1', 's3')],
      want: [['p/a/t1.s1'], ['p/b/t1.s2'], ['p/a/t1.s3']],
    },
    {
      name: 'a write of a trace another producer changed in between comes after that change',
      writes: [write('p', 'a', 't1'), write('p', 'b', 't1'), write('p', 'a', 't1'), write('p', 'a', 't2')],
      want: [['p/a/t1'], ['p/b/t1'], ['p/a/t1', 'p/a/t2']],
    },
  ])('$name', ({ writes, want }) => {
    expect(runs(writes)).toEqual(want);
  });

  it('a file that is not a log file is refused naming the field', () => {
    expect(() => decodeLogFile(JSON.stringify({ v: 1, projectId: 'p' }))).toThrow(/receivedAt/);
    expect(() => decodeLogFile(JSON.stringify({ v: 2, writes: [{ projectId: 'p' }] }))).toThrow(
      /not an ingestion log file: writes\.0\.receivedAt/,
    );
    expect(() => decodeLogFile(JSON.stringify({ v: 2, writes: [] }))).toThrow(
      /not an ingestion log file: writes/,
    );
    expect(() => decodeLogFile(JSON.stringify({ v: 3 }))).toThrow(/not an ingestion log file: v/);
  });

  it('a file is stored gzipped, which zlib reads back to its JSON; a file stored as plain JSON still reads', async () => {
    const writes = [
      {
        projectId: 'p',
        receivedAt: 1_796_461_621_234,
        attribution: { apiKey: 'pk', sdkName: 'python', sdkVersion: '3.0.0' },
        targets: { legacy: false, staging: false, events: true },
        virtualRoots: false,
        changes: new LegacyChanges(),
        scores: [],
        events: Array.from({ length: 20 }, (_, i) => ({
          span_id: `s${i}`,
          input: 'the same prompt '.repeat(40),
        })),
      },
    ];
    const stored = await packLogFile(writes);
    const text = encodeLogFile(writes);
    expect(gunzipSync(stored).toString('utf8')).toBe(text);
    expect(stored.length).toBeLessThan(text.length / 4);
    expect(await readLogFile(stored)).toEqual(decodeLogFile(text));
    expect(await readLogFile(Buffer.from(text))).toEqual(decodeLogFile(text));
    await expect(readLogFile(Buffer.from([0x1f, 0x8b, 0, 0]))).rejects.toThrow();
  });

  it('a file of one write logged before requests were committed together (version 1) still reads', () => {
    const v1 = {
      v: 1,
      projectId: 'p',
      receivedAt: 1_796_461_621_234,
      attribution: { apiKey: 'pk', sdkName: 'python', sdkVersion: '3.0.0' },
      targets: { legacy: true, staging: true, events: false },
      virtualRoots: false,
      traces: [['t1', [{ patch: { id: 't1', name: 'n' }, at: '2026-12-05T09:07:01.234Z', isUpdate: false }]]],
      observations: [],
      scores: [],
      events: [],
    };
    const [w, ...rest] = decodeLogFile(JSON.stringify(v1));
    expect(rest).toEqual([]);
    expect(w!.changes.traces.get('t1')).toEqual(v1.traces[0]![1]);
    expect(JSON.parse(encodeLogFile([w!]))).toEqual({
      v: 2,
      writes: [{ ...v1, v: undefined }].map(({ v: _, ...x }) => x),
    });
  });
});

describe("the web's backlog gate", () => {
  const bounds = { backlogMaxAgeSeconds: 10, backlogMaxBytes: 1_000 };
  const over: Backlog = { files: 9, bytes: 10, oldestAgeSeconds: 300, refused: 0 };
  const clear: Backlog = { files: 0, bytes: 0, oldestAgeSeconds: 0, refused: 0 };
  /** A gate whose reads the test answers one by one, on a clock it moves. */
  const gateOf = () => {
    const clock = { ms: 0 };
    const pending: ((b: Backlog) => void)[] = [];
    let reads = 0;
    const gate = backlogGate(
      () => {
        reads++;
        return new Promise<Backlog>((resolve) => pending.push(resolve));
      },
      bounds,
      () => clock.ms,
    );
    return { gate, clock, answer: (b: Backlog) => pending.shift()!(b), reads: () => reads };
  };
  const refused = async (p: Promise<unknown>) => (await p) !== undefined;

  it('reads at most once a second; a fresh answer serves the writes meanwhile without waiting', async () => {
    const { gate, clock, answer, reads } = gateOf();
    const first = gate.refusal();
    answer(over);
    expect(await refused(first)).toBe(true);
    clock.ms += 500;
    expect(await refused(gate.refusal())).toBe(true);
    expect(reads()).toBe(1);
    // A second later a new read starts; the answer it replaces is still fresh enough to serve.
    clock.ms += 500;
    const during = gate.refusal();
    expect(reads()).toBe(2);
    answer(clear);
    expect(await refused(during)).toBe(false);
  });

  it('after an idle spell, writes wait for the read under way instead of the answer from before it', async () => {
    const { gate, clock, answer, reads } = gateOf();
    const outage = gate.refusal();
    answer(over);
    expect(await refused(outage)).toBe(true);
    clock.ms += 5 * 60_000;
    // Several writes at once: one starts the read, all of them wait for it.
    const writes = [gate.refusal(), gate.refusal(), gate.refusal()];
    expect(reads()).toBe(2);
    answer(clear);
    expect(await Promise.all(writes.map(refused))).toEqual([false, false, false]);
  });

  it('a read that fails keeps the last answer', async () => {
    const clock = { ms: 0 };
    const unreachable = Promise.reject(new Error('queue unreachable'));
    unreachable.catch(() => {});
    const answers = [Promise.resolve(over), unreachable];
    const gate = backlogGate(
      () => answers.shift()!,
      bounds,
      () => clock.ms,
    );
    expect(await refused(gate.refusal())).toBe(true);
    clock.ms += 2_000;
    expect(await refused(gate.refusal())).toBe(true);
    expect(answers).toEqual([]);
    expect(gate.behind()).toBe(true);
  });
});
