/**
 * Where the migration's paths overlap, on real stores: spans written directly in `dual` by a real
 * OpenTelemetry exporter with sub-millisecond start times (as the Python SDKs and most exporters
 * send them), then copied again by the historic backfill; and a rollback to release 3 followed by
 * a new upgrade. After each, `events_full` (FINAL) must hold every span exactly once and one root
 * per trace (an OTLP trace's own root span), compared row by row.
 */

import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillStep, backfillSteps } from '../fixtures/backfill.ts';
import { withOtlpTracer } from '../fixtures/otlp-tracer.ts';
import { cli, createProject, DUAL_ENV, type Project, startWeb, type WebServer } from '../fixtures/service.ts';
import { type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';

let stores: Stores;
let project: Project;
let dual: WebServer;

interface EventRow {
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  start_time: string;
}

/** Epoch seconds and nanoseconds with sub-millisecond digits, as an HrTime. */
const T0 = Math.floor(Date.parse('2026-11-02T10:00:00Z') / 1000);
const hr = (offsetMs: number, subMsNanos: number): [number, number] => [
  T0 + Math.floor(offsetMs / 1000),
  (offsetMs % 1000) * 1_000_000 + subMsNanos,
];
/** The millisecond text the legacy tables keep of an HrTime. */
const msText = ([s, ns]: [number, number]) =>
  new Date(s * 1000 + Math.floor(ns / 1_000_000)).toISOString().replace('T', ' ').replace('Z', '');

/**
 * One trace through the real OTLP protobuf exporter with the version 4 header: a root and two
 * children, each exported as it ends (children first, as a SimpleSpanProcessor does).
 */
async function sendTrace(name: string, k: number) {
  const times = {
    root: hr(k * 10_000, 123_456),
    a: hr(k * 10_000 + 5, 987_001),
    b: hr(k * 10_000 + 9, 400_999),
  };
  const { root, a, b } = await withOtlpTracer(
    dual,
    project,
    { service: 'py-like-app', tracer: 'agent-app' },
    (tracer) => {
      const root = tracer.startSpan(name, {
        startTime: times.root,
        attributes: { 'langfuse.user.id': `user-${k}`, 'langfuse.session.id': `session-${k}` },
      });
      const ctx = trace.setSpan(ROOT_CONTEXT, root);
      const a = tracer.startSpan('retrieve', { startTime: times.a }, ctx);
      a.end(hr(k * 10_000 + 50, 1));
      const b = tracer.startSpan(
        'llm',
        { startTime: times.b, attributes: { 'gen_ai.request.model': 'gpt-4o-mini' } },
        ctx,
      );
      b.end(hr(k * 10_000 + 80, 2));
      root.end(hr(k * 10_000 + 99, 3));
      return { root, a, b };
    },
  );
  const traceId = root.spanContext().traceId;
  return {
    traceId,
    rows: [
      {
        trace_id: traceId,
        span_id: root.spanContext().spanId,
        parent_span_id: '',
        start_time: msText(times.root),
      },
      {
        trace_id: traceId,
        span_id: a.spanContext().spanId,
        parent_span_id: root.spanContext().spanId,
        start_time: msText(times.a),
      },
      {
        trace_id: traceId,
        span_id: b.spanContext().spanId,
        parent_span_id: root.spanContext().spanId,
        start_time: msText(times.b),
      },
    ] satisfies EventRow[],
  };
}

async function events(table = 'events_full'): Promise<EventRow[]> {
  const rs = await stores.ch.client.query({
    query: `SELECT trace_id, span_id, parent_span_id, toString(start_time) AS start_time FROM ${table} FINAL
            WHERE project_id = {p:String} ORDER BY trace_id, start_time, parent_span_id, span_id`,
    query_params: { p: project.projectId },
    format: 'JSONEachRow',
  });
  return (await rs.json<EventRow>()).map((r) => ({ ...r, start_time: r.start_time.replace(/000$/, '') }));
}

const sortRows = (rows: EventRow[]) =>
  [...rows].sort(
    (x, y) =>
      x.trace_id.localeCompare(y.trace_id) ||
      x.start_time.localeCompare(y.start_time) ||
      x.parent_span_id.localeCompare(y.parent_span_id) ||
      x.span_id.localeCompare(y.span_id),
  );

const backfill = (step: number) => backfillStep(stores.env, step);

beforeAll(async () => {
  // Migrated as an upgrade migrates them; then dual write.
  stores = await startStores({ migrated: true });
  dual = await startWeb({ ...stores.env, ...DUAL_ENV });
  project = await createProject(stores.env, 'overlaps');
}, 300_000);

afterAll(async () => {
  await stopStores(stores, dual);
});

describe('spans written directly in dual, then backfilled', () => {
  const expected: EventRow[] = [];

  it('are written once each, with one root per trace, before the backfill', async () => {
    for (let k = 0; k < 3; k++) expected.push(...(await sendTrace(`agent-${k}`, k)).rows);
    expect(await events()).toEqual(sortRows(expected));
  });

  it('stay once each with one root per trace after the backfill copies them again', async () => {
    for (const step of [1, 2, 3]) {
      const r = await backfill(step);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(await events()).toEqual(sortRows(expected));
    expect(await events('events_core')).toEqual(sortRows(expected));
  });

  it('traces written after the backfill are written once each with one root too', async () => {
    expected.push(...(await sendTrace('agent-late', 7)).rows);
    expect(await events()).toEqual(sortRows(expected));
  });
});

interface StepReport {
  step: number;
  status: string;
  chunksDone: number;
}

async function backfillStatus(): Promise<StepReport[]> {
  return backfillSteps<StepReport>(stores.env);
}

const statuses = async () => (await backfillStatus()).map((s) => `${s.step}:${s.status}`);

describe('a rollback to release 3, then a new upgrade', () => {
  it('the rewind resets the steps whose output it dropped, with their checkpoints', async () => {
    expect(await statuses()).toEqual(['1:finished', '2:finished', '3:finished', '4:pending', '5:dormant']);
    await dual.stop();
    const down = await cli(['migrate', 'down', '--to', '37'], { ...stores.env, ...DUAL_ENV });
    expect(down.code, down.stderr).toBe(0);
    expect(down.stderr).toContain('backfill steps 1, 2, 3, 4, 5 reset');
    const reset = await backfillStatus();
    expect(reset.map((s) => `${s.step}:${s.status}:${s.chunksDone}`)).toEqual([
      '1:pending:0',
      '2:pending:0',
      '3:pending:0',
      '4:pending:0',
      '5:dormant:0',
    ]);
  });

  it('the next upgrade brings every historic span back exactly once', async () => {
    const up = await cli(['migrate', 'up'], { ...stores.env, ...DUAL_ENV });
    expect(up.code, up.stderr).toBe(0);
    expect(await events()).toEqual([]);
    for (const step of [1, 2, 3]) {
      const r = await backfill(step);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`backfill step ${step} finished`);
    }
    expect(await events()).toHaveLength(12);
    dual = await startWeb({ ...stores.env, ...DUAL_ENV });
  });

  it('a finished step whose table was replaced since (a restore) is not reported finished', async () => {
    const sql = (query: string) => stores.ch.client.command({ query });
    await sql('CREATE TABLE events_full_restored AS events_full');
    await sql('EXCHANGE TABLES events_full AND events_full_restored');
    await sql('DROP TABLE events_full_restored');
    // Step 1 wrote nothing (OTLP traces have no virtual root) and step 2's scratch table is intact.
    expect(await statuses()).toEqual(['1:finished', '2:finished', '3:pending', '4:pending', '5:dormant']);
    for (const step of [1, 2, 3]) expect((await backfill(step)).code).toBe(0);
    expect(await events()).toHaveLength(12);
  });
});
