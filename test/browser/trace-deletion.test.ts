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
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceWithJsSdk } from '../fixtures/js-sdk.ts';
import { basicAuth, startWorker, type WebServer } from '../fixtures/service.ts';
import { request, signIn as signInApi } from '../fixtures/ui-client.ts';
import { screenshot } from './chromium.ts';
import { type BrowserSuite, closeBrowserSuite, startBrowserSuite } from './suite.ts';

let suite: BrowserSuite<'owner' | 'member'>;
/** Runs the queued deletion; started by the test, once the view showed it under way. */
let worker: WebServer | undefined;
let owner: { userId: string; email: string; password: string };
let member: { userId: string; email: string; password: string };
const traces: Record<'doomed' | 'kept', string> = { doomed: '', kept: '' };

beforeAll(async () => {
  suite = await startBrowserSuite({
    project: 'browser-trace-deletion',
    redis: true,
    people: { owner: 'owner', member: 'member' },
  });
  ({ owner, member } = suite.people);
  await traceWithJsSdk({ ...suite.project, baseUrl: suite.web.url }, () => {
    for (const name of ['doomed', 'kept'] as const) {
      const root = startObservation(name, { input: { question: `${name}?` } });
      traces[name] = root.traceId;
      root.end();
    }
  });
});

afterAll(async () => {
  const left = await closeBrowserSuite(suite, worker);
  expect(left).toEqual({ blocked: [], errors: [] });
});

/** The trace's observations as the public API reads them. */
async function observationsOf(traceId: string): Promise<string[]> {
  const res = await fetch(`${suite.web.url}/api/public/v2/observations?traceId=${traceId}`, {
    headers: { authorization: basicAuth(suite.project) },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { name: string }[] }).data.map((o) => o.name);
}

async function eventRows(traceId: string): Promise<number> {
  const rs = await suite.ch.client.query({
    query: 'SELECT count() AS n FROM events_full WHERE project_id = {p:String} AND trace_id = {t:String}',
    query_params: { p: suite.project.projectId, t: traceId },
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ n: string }>())[0]!.n);
}

const traceUrl = (traceId: string) => `/project/${suite.project.projectId}/traces/${traceId}`;

describe('deleting a trace from its page', () => {
  it('is not offered to a member, and the route refuses one', async () => {
    const page = await suite.chromium.open(suite.web.url, member);
    await page.goto(traceUrl(traces.doomed));
    await page.getByRole('heading', { name: `Trace ${traces.doomed}` }).waitFor();
    await page.getByRole('button', { name: 'doomed' }).first().waitFor();
    expect(await page.getByRole('button', { name: 'Delete trace' }).count()).toBe(0);
    const b = await signInApi(suite.web.url, member);
    const res = await request(
      b,
      'DELETE',
      `/api/ui/projects/${suite.project.projectId}/traces/${traces.doomed}`,
      {
        headers: { 'x-csrf-token': b.csrf },
      },
    );
    expect(res.status).toBe(403);
    expect(await observationsOf(traces.doomed)).toEqual(['doomed']);
  });

  it('asks the owner first, and deletes the trace everywhere once confirmed', async () => {
    const page: Page = await suite.chromium.open(suite.web.url, owner);
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
    worker = await startWorker(suite.env);
    await page.waitForURL(`**/project/${suite.project.projectId}/observations`, { timeout: 60_000 });
    await page.getByRole('link', { name: 'kept' }).waitFor();
    expect(await page.getByRole('link', { name: 'doomed' }).count()).toBe(0);
    await screenshot(page, 'trace-deleted');

    expect(await observationsOf(traces.doomed)).toEqual([]);
    expect(await eventRows(traces.doomed)).toBe(0);
    expect(await observationsOf(traces.kept)).toEqual(['kept']);
    const audited = await suite.pool.query(
      `SELECT a.resource_type, a.resource_id, a.action, a.api_key_id, u.email FROM audit_logs a
         LEFT JOIN users u ON u.id = a.user_id WHERE a.project_id = $1`,
      [suite.project.projectId],
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
