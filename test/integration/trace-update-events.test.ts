/**
 * A trace update in `dual` reaches the events already written for the trace: spans exported
 * directly (OTLP with the version 4 header) carry the trace's fields as they were; a later batch
 * `trace-create` that renames, re-tags, publishes or moves the trace must show on those rows of
 * both events tables after FINAL, with COLUMNAR_USE_LIGHTWEIGHT_UPDATE true (lightweight UPDATE)
 * and false (mutation). Everything else on the rows, and every other trace's rows, stay as they were.
 */

import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withOtlpTracer } from '../fixtures/otlp-tracer.ts';
import {
  basicAuth,
  createProject,
  DUAL_ENV,
  type Project,
  startWeb,
  type WebServer,
} from '../fixtures/service.ts';
import { type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';

// biome-ignore lint/suspicious/noExplicitAny: rows read back from the store are compared field by field
type StoreRow = Record<string, any>;

let stores: Stores;
let project: Project;

beforeAll(async () => {
  stores = await startStores({ migrated: true });
  project = await createProject(stores.env, 'trace-updates');
}, 300_000);

afterAll(() => stopStores(stores));

/** A root and a child through the real OTLP exporter with the version 4 header (direct write). */
async function sendTrace(web: WebServer, name: string): Promise<string> {
  return withOtlpTracer(web, project, { service: 'app', tracer: 'app' }, (tracer) => {
    // The trace attributes on every span, as the SDKs propagate them.
    const attributes = { 'langfuse.user.id': 'user-old', 'langfuse.session.id': 'session-old' };
    const root = tracer.startSpan(name, { attributes });
    const child = tracer.startSpan('llm', { attributes }, trace.setSpan(ROOT_CONTEXT, root));
    child.end();
    root.end();
    return root.spanContext().traceId;
  });
}

async function rows(table: string, traceId: string): Promise<StoreRow[]> {
  const rs = await stores.ch.client.query({
    query: `SELECT * FROM ${table} FINAL WHERE project_id = {p:String} AND trace_id = {t:String} ORDER BY span_id`,
    query_params: { p: project.projectId, t: traceId },
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
  return rs.json<StoreRow>();
}

const CHANGED = ['trace_name', 'user_id', 'session_id', 'release', 'version', 'tags', 'public'];

describe.each([
  ['true', 'a lightweight UPDATE'],
  ['false', 'a mutation'],
])('with COLUMNAR_USE_LIGHTWEIGHT_UPDATE=%s (%s)', (lightweight) => {
  it('a batch trace update in dual reaches the events written directly, in both events tables', async () => {
    const web = await startWeb({ ...stores.env, ...DUAL_ENV, COLUMNAR_USE_LIGHTWEIGHT_UPDATE: lightweight });
    try {
      const traceId = await sendTrace(web, `agent-${lightweight}`);
      const other = await sendTrace(web, `other-${lightweight}`);
      const before = {
        events_full: await rows('events_full', traceId),
        events_core: await rows('events_core', traceId),
      };
      const otherBefore = await rows('events_full', other);
      expect(before.events_full).toHaveLength(2);
      expect(before.events_full.every((r) => r['user_id'] === 'user-old' && !r['public'])).toBe(true);

      const res = await fetch(`${web.url}/api/public/ingestion`, {
        method: 'POST',
        headers: { authorization: basicAuth(project), 'content-type': 'application/json' },
        body: JSON.stringify({
          batch: [
            {
              id: `upd-${lightweight}`,
              type: 'trace-create',
              timestamp: new Date().toISOString(),
              body: {
                id: traceId,
                name: 'renamed',
                userId: 'user-new',
                sessionId: 'session-new',
                release: 'r2',
                version: 'v2',
                tags: ['reviewed'],
                public: true,
              },
            },
          ],
        }),
      });
      expect(res.status).toBe(207);
      expect(((await res.json()) as { errors: unknown[] }).errors).toEqual([]);

      // Acknowledged means written: read at once, no waiting.
      for (const table of ['events_full', 'events_core'] as const) {
        const after = await rows(table, traceId);
        expect(after.map((r) => r['span_id'])).toEqual(before[table].map((r) => r['span_id']));
        for (const [i, row] of after.entries()) {
          expect(row, `${table} ${row['span_id']}`).toMatchObject({
            trace_name: 'renamed',
            user_id: 'user-new',
            session_id: 'session-new',
            release: 'r2',
            version: 'v2',
            tags: ['reviewed'],
            public: true,
            bookmarked: false,
          });
          const was = before[table][i]!;
          for (const [column, value] of Object.entries(row))
            if (!CHANGED.includes(column))
              expect(value, `${table} ${row['span_id']}.${column}`).toEqual(was[column]);
        }
      }
      expect(await rows('events_full', other)).toEqual(otherBefore);
      // The OTLP root stays the trace's one root: no virtual root t-<id> is staged beside it.
      const staged = await stores.ch.client.query({
        query:
          'SELECT id FROM observations_batch_staging FINAL WHERE project_id = {p:String} AND trace_id = {t:String}',
        query_params: { p: project.projectId, t: traceId },
        format: 'JSONEachRow',
      });
      expect(await staged.json()).toEqual([]);
    } finally {
      await web.stop();
    }
  }, 180_000);
});
