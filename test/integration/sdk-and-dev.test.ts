/**
 * The version 5 JS SDK (`@langfuse/tracing` + `@langfuse/otel`) against `observatory dev`, the
 * one-process embedded mode a newcomer starts: a generation with model, usage, cost, user and
 * session lands in `events_full` as a GENERATION with those fields.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { propagateAttributes, startObservation } from '@langfuse/tracing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { type DevService, devAuth, startDev } from '../fixtures/dev.ts';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';
import { request, signIn } from '../fixtures/ui-client.ts';

/** Signs in to the web UI as the printed default user; the projects that user sees. */
async function devUserProjects(): Promise<{ id: string; role: string }[]> {
  const session = await signIn(dev.url, dev);
  const projects = await request(session, 'GET', '/api/ui/projects');
  return (projects.body.data as { id: string; role: string }[]).map((p) => ({ id: p.id, role: p.role }));
}

let dir: string;
let dev: DevService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'obs-dev-'));
  dev = await startDev(dir, {}, 90_000);
});
afterAll(async () => {
  await dev?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('observatory dev with the version 5 SDK', () => {
  it('prints a ready line with working keys and serves health', async () => {
    expect(dev.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${dev.url}/api/public/health`)).status).toBe(200);
  });

  it('prints the web UI and a default user who signs in and sees the default project', async () => {
    expect(dev.uiUrl).toBe(`${dev.url}/`);
    expect((await fetch(dev.uiUrl)).headers.get('content-type')).toMatch(/^text\/html/);
    expect(dev.email).toBe('dev@observatory.local');
    expect(await devUserProjects()).toEqual([{ id: dev.projectId, role: 'owner' }]);
  });

  it('stores a generation with model, usage, cost, user and session in events_full', async () => {
    let traceId = '';
    await withSdkTracer(
      dev,
      dev.url,
      () =>
        propagateAttributes({ userId: 'user-5', sessionId: 'session-5' }, () => {
          const root = startObservation('handle', { input: { q: 'hi' } });
          traceId = root.traceId;
          const gen = root.startObservation(
            'llm',
            {
              model: 'gpt-4o-mini',
              usageDetails: { input: 10, output: 20, total: 30 },
              costDetails: { total: 0.002 },
            },
            { asType: 'generation' },
          );
          gen.update({ output: 'hello' });
          gen.end();
          root.end();
        }),
      { exportMode: 'immediate' },
    );

    // The embedded engine belongs to the dev process: stop it, then read its data directory.
    await dev.stop();
    const client = createAnalyticsClient({ url: `chdb://${join(dir, 'analytics')}` });
    try {
      const rs = await client.query({
        query: `SELECT type, name, provided_model_name, user_id, session_id, usage_details, cost_details, ingestion_sdk_name
                FROM events_full FINAL WHERE trace_id = {t:String} ORDER BY type`,
        query_params: { t: traceId },
        format: 'JSONEachRow',
      });
      const rows = await rs.json<Record<string, unknown>>();
      expect(rows).toHaveLength(2);
      const gen = rows.find((r) => r['type'] === 'GENERATION')!;
      expect(gen).toMatchObject({
        name: 'llm',
        provided_model_name: 'gpt-4o-mini',
        user_id: 'user-5',
        session_id: 'session-5',
        ingestion_sdk_name: 'javascript',
      });
      expect(gen['usage_details']).toEqual({ input: 10, output: 20, total: 30 });
      expect(Number((gen['cost_details'] as Record<string, unknown>)['total'])).toBeCloseTo(0.002);
      const core = await client.query({
        query: 'SELECT count() AS n FROM events_core WHERE trace_id = {t:String}',
        query_params: { t: traceId },
        format: 'JSONEachRow',
      });
      expect(Number((await core.json<{ n: string }>())[0]!.n)).toBe(2);
    } finally {
      await client.close();
    }
  });

  it('restarts on the same data directory with the same working keys', async () => {
    const before = dev;
    dev = await startDev(dir, {}, 90_000);
    expect(dev.publicKey).toBe(before.publicKey);
    expect(dev.password).toBe(before.password);
    expect(await devUserProjects()).toEqual([{ id: dev.projectId, role: 'owner' }]);
    const res = await fetch(`${dev.url}/api/public/otel/v1/traces`, {
      method: 'POST',
      headers: {
        authorization: devAuth(dev),
        'content-type': 'application/json',
      },
      body: '{"resourceSpans":[]}',
    });
    expect(res.status).toBe(200);
  });
});
