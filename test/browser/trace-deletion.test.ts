/**
 * Deleting a trace from the trace view in Debian's chromium (playwright-core) against `observatory
 * web` in `events_only` on real PostgreSQL and the analytics server, with traces the JS SDK (v5,
 * OpenTelemetry) sent: a member sees no delete action and is refused the route; the owner's
 * delete asks first (declined: nothing happens), then queues the trace's deletion: the view shows
 * it under way while no worker runs, and once `observatory worker` ran it the view opens the list;
 * the trace has left the public API and the events table while its sibling stays, and the audit
 * log names the owner.
 */
import { startObservation } from '@langfuse/tracing';
import pgLib from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceWithJsSdk } from '../fixtures/js-sdk.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { type RedisFixture, startRedis } from '../fixtures/redis.ts';
import {
  type AnalyticsServer,
  basicAuth,
  createProject,
  MODE_ENV,
  type Project,
  startAnalyticsServer,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { createProjectMember, request, signIn as signInApi } from '../fixtures/ui-client.ts';
import { type Chromium, closeSuite, screenshot, startChromium } from './chromium.ts';

let pg: PostgresFixture;
let ch: AnalyticsServer;
let redis: RedisFixture;
let web: WebServer;
let worker: WebServer | undefined;
let chromium: Chromium;
let project: Project;
let db: pgLib.Pool;
let env: Record<string, string>;
let owner: { userId: string; email: string; password: string };
let member: { userId: string; email: string; password: string };
const traces: Record<'doomed' | 'kept', string> = { doomed: '', kept: '' };

beforeAll(async () => {
  [pg, ch, redis] = await Promise.all([startPostgres(), startAnalyticsServer(), startRedis()]);
  env = { DATABASE_URL: pg.url, CLICKHOUSE_URL: ch.url, REDIS_URL: redis.url, ...MODE_ENV.events_only };
  web = await startWeb(env);
  [chromium, project] = await Promise.all([startChromium(), createProject(env, 'browser-trace-deletion')]);
  [owner, member] = await Promise.all([
    createProjectMember(env, 'deleting-owner@example.com', project.projectId, 'owner'),
    createProjectMember(env, 'deleting-member@example.com', project.projectId, 'member'),
  ]);
  db = new pgLib.Pool({ connectionString: pg.url, max: 1 });
  await traceWithJsSdk({ ...project, baseUrl: web.url }, () => {
    for (const name of ['doomed', 'kept'] as const) {
      const root = startObservation(name, { input: { question: `${name}?` } });
      traces[name] = root.traceId;
      root.end();
    }
  });
});

afterAll(async () => {
  await db?.end();
  const left = await closeSuite(chromium, [web, worker], [ch, pg, redis]);
  expect(left).toEqual({ blocked: [], errors: [] });
});

/** The trace's observations as the public API reads them. */
async function observationsOf(traceId: string): Promise<string[]> {
  const res = await fetch(`${web.url}/api/public/v2/observations?traceId=${traceId}`, {
    headers: { authorization: basicAuth(project) },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { name: string }[] }).data.map((o) => o.name);
}

async function eventRows(traceId: string): Promise<number> {
  const rs = await ch.client.query({
    query: 'SELECT count() AS n FROM events_full WHERE project_id = {p:String} AND trace_id = {t:String}',
    query_params: { p: project.projectId, t: traceId },
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ n: string }>())[0]!.n);
}

const traceUrl = (traceId: string) => `/project/${project.projectId}/traces/${traceId}`;

describe('deleting a trace from its page', () => {
  it('is not offered to a member, and the route refuses one', async () => {
    const page = await chromium.open(web.url, member);
    await page.goto(traceUrl(traces.doomed));
    await page.getByRole('heading', { name: `Trace ${traces.doomed}` }).waitFor();
    await page.getByRole('button', { name: 'doomed' }).first().waitFor();
    expect(await page.getByRole('button', { name: 'Delete trace' }).count()).toBe(0);
    const b = await signInApi(web.url, member);
    const res = await request(b, 'DELETE', `/api/ui/projects/${project.projectId}/traces/${traces.doomed}`, {
      headers: { 'x-csrf-token': b.csrf },
    });
    expect(res.status).toBe(403);
    expect(await observationsOf(traces.doomed)).toEqual(['doomed']);
  });

  it('asks the owner first, and deletes the trace everywhere once confirmed', async () => {
    const page: Page = await chromium.open(web.url, owner);
    await page.goto(traceUrl(traces.doomed));
    const remove = page.getByRole('button', { name: 'Delete trace' });
    await remove.waitFor();
    await screenshot(page, 'trace-delete-action');

    const asked: string[] = [];
    page.once('dialog', (d) => {
      asked.push(d.message());
      void d.dismiss();
    });
    await remove.click();
    await expect.poll(() => asked.length).toBe(1);
    expect(asked[0]).toContain(traces.doomed);
    expect(page.url()).toContain(traceUrl(traces.doomed));
    expect(await observationsOf(traces.doomed)).toEqual(['doomed']);

    page.once('dialog', (d) => void d.accept());
    await remove.click();
    // No worker runs yet: the deletion is queued, and the view says so.
    await page
      .getByRole('status')
      .getByText('Deletion in progress (queued): 0 of 1 traces deleted')
      .waitFor();
    await screenshot(page, 'trace-deletion-queued');
    expect(await observationsOf(traces.doomed)).toEqual(['doomed']);
    worker = await startWorker(env);
    await page.waitForURL(`**/project/${project.projectId}/observations`, { timeout: 60_000 });
    await page.getByRole('link', { name: 'kept' }).waitFor();
    expect(await page.getByRole('link', { name: 'doomed' }).count()).toBe(0);
    await screenshot(page, 'trace-deleted');

    expect(await observationsOf(traces.doomed)).toEqual([]);
    expect(await eventRows(traces.doomed)).toBe(0);
    expect(await observationsOf(traces.kept)).toEqual(['kept']);
    const audited = await db.query(
      `SELECT a.resource_type, a.resource_id, a.action, a.api_key_id, u.email FROM audit_logs a
         LEFT JOIN users u ON u.id = a.user_id WHERE a.project_id = $1`,
      [project.projectId],
    );
    expect(audited.rows).toEqual([
      {
        resource_type: 'trace',
        resource_id: traces.doomed,
        action: 'delete',
        api_key_id: null,
        email: owner.email,
      },
    ]);
  });
});
