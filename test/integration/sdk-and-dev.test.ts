/**
 * The version 5 JS SDK (`@langfuse/tracing` + `@langfuse/otel`) against `observatory dev`, the
 * one-process embedded mode a newcomer starts: a generation with model, usage, cost, user and
 * session lands in `events_full` as a GENERATION with those fields.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LangfuseSpanProcessor } from '@langfuse/otel';
import { propagateAttributes, setLangfuseTracerProvider, startObservation } from '@langfuse/tracing';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnalyticsClient } from '../../server/platform/datastores/clickhouse.ts';
import { type ManagedProcess, startProcess, waitUntilReady } from '../fixtures/processes.ts';
import { ROOT } from '../fixtures/service.ts';

interface DevReady {
  url: string;
  projectId: string;
  publicKey: string;
  secretKey: string;
  uiUrl: string;
  email: string;
  password: string;
}

/** Signs in to the web UI as the printed default user; the projects that user sees. */
async function devUserProjects(): Promise<{ id: string; role: string }[]> {
  const session = await fetch(`${ready.url}/api/ui/session`);
  const csrf = ((await session.json()) as { csrfToken: string }).csrfToken;
  const csrfCookie = session.headers.getSetCookie()[0]!.split(';')[0]!;
  const login = await fetch(`${ready.url}/api/ui/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: csrfCookie, 'x-csrf-token': csrf },
    body: JSON.stringify({ email: ready.email, password: ready.password }),
  });
  expect(login.status).toBe(200);
  const sessionCookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
  const projects = await fetch(`${ready.url}/api/ui/projects`, { headers: { cookie: sessionCookie } });
  return ((await projects.json()) as { data: { id: string; role: string }[] }).data.map((p) => ({
    id: p.id,
    role: p.role,
  }));
}

let dir: string;
let dev: ManagedProcess;
let ready: DevReady;

async function startDev(): Promise<void> {
  dev = startProcess(
    'dev',
    process.execPath,
    [join(ROOT, 'server/bin/observatory.ts'), 'dev', '--port', '0', '--data', dir, '--json'],
    {
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'], LOG_LEVEL: 'warn' },
    },
  );
  await waitUntilReady(dev, async () => dev.output().includes('"secretKey"'), { timeoutMs: 90_000 });
  ready = JSON.parse(
    dev
      .output()
      .split('\n')
      .find((l) => l.includes('"secretKey"'))!,
  ) as DevReady;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'obs-dev-'));
  await startDev();
});
afterAll(async () => {
  await dev?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

describe('observatory dev with the version 5 SDK', () => {
  it('prints a ready line with working keys and serves health', async () => {
    expect(ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${ready.url}/api/public/health`)).status).toBe(200);
  });

  it('prints the web UI and a default user who signs in and sees the default project', async () => {
    expect(ready.uiUrl).toBe(`${ready.url}/`);
    expect((await fetch(ready.uiUrl)).headers.get('content-type')).toMatch(/^text\/html/);
    expect(ready.email).toBe('dev@observatory.local');
    expect(await devUserProjects()).toEqual([{ id: ready.projectId, role: 'owner' }]);
  });

  it('stores a generation with model, usage, cost, user and session in events_full', async () => {
    const processor = new LangfuseSpanProcessor({
      publicKey: ready.publicKey,
      secretKey: ready.secretKey,
      baseUrl: ready.url,
      exportMode: 'immediate',
      mediaUploadEnabled: false,
    });
    const provider = new NodeTracerProvider({ spanProcessors: [processor] });
    provider.register();
    setLangfuseTracerProvider(provider);
    let traceId = '';
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
    });
    await processor.forceFlush();
    await provider.shutdown();
    setLangfuseTracerProvider(null);

    // The embedded engine belongs to the dev process: stop it, then read its data directory.
    await dev.kill('SIGTERM');
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
    const before = ready;
    await startDev();
    expect(ready.publicKey).toBe(before.publicKey);
    expect(ready.password).toBe(before.password);
    expect(await devUserProjects()).toEqual([{ id: ready.projectId, role: 'owner' }]);
    const res = await fetch(`${ready.url}/api/public/otel/v1/traces`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${ready.publicKey}:${ready.secretKey}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: '{"resourceSpans":[]}',
    });
    expect(res.status).toBe(200);
  });
});
