/**
 * The background migrations page in Debian's chromium while the worker runs the historic backfill:
 * a deployment that ran release 4 in `legacy` (traces from the npm `langfuse` 3.x SDK in the legacy
 * tables over three months) is switched to `dual`; `observatory worker` then runs the chain in
 * small throttled chunks and the open page, refreshing itself, must show each step move from
 * pending through running with chunks done to finished, ending where `observatory backfill status`
 * says the chain is. Real PostgreSQL, Redis and the analytics server.
 */
import { Langfuse } from 'langfuse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillSteps } from '../fixtures/backfill.ts';
import {
  createProject,
  DUAL_ENV,
  LEGACY_ENV,
  type Project,
  startWeb,
  startWorker,
  type WebServer,
} from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';
import { createUiUser } from '../fixtures/ui-client.ts';
import { bodyRows, type Chromium, screenshot, startChromium } from './chromium.ts';

let stores: Stores & Given<{ redis: true }>;
let web: WebServer | undefined;
let worker: WebServer | undefined;
let chromium: Chromium;
let project: Project;
const users = {} as Record<'owner' | 'member' | 'projectOwner', { email: string; password: string }>;

const TRACES = 24;
const MONTH_MS = 31 * 24 * 3600_000;
/** Small throttled chunks, so each step lasts several of the page's five-second refreshes. */
const CHUNKING = { chunkRows: 4, throttleMs: 1000 };
/** The chain starts 30 s after the worker and then needs tens of seconds on a loaded machine. */
const CHAIN_DEADLINE_MS = 240_000;

/** Historic traces: a span and a generation each, spread over three monthly partitions. */
async function sendHistory(url: string) {
  const sdk = new Langfuse({ publicKey: project.publicKey, secretKey: project.secretKey, baseUrl: url });
  for (let i = 0; i < TRACES; i++) {
    const at = new Date(Date.now() - (1 + (i % 3)) * MONTH_MS + i * 60_000);
    const trace = sdk.trace({ id: `hist-${i}`, name: `historic-${i}`, timestamp: at, input: { i } });
    const span = trace.span({
      id: `hist-${i}-span`,
      name: 'retrieve',
      startTime: at,
      endTime: new Date(at.getTime() + 400),
    });
    span.generation({
      id: `hist-${i}-gen`,
      name: 'llm',
      model: 'gpt-4o',
      startTime: at,
      endTime: new Date(at.getTime() + 300),
      output: `answer ${i}`,
    });
  }
  await sdk.shutdownAsync();
}

/** A project's user, or with `--role owner` in the deployment's organization: a deployment admin. */
function createUser(email: string, role: string, of: 'project' | 'deployment' = 'project') {
  const scope = of === 'deployment' ? [] : ['--project', project.projectId];
  return createUiUser(stores.env, email, [...scope, '--role', role]);
}

const tab = (who: { email: string; password: string }) => chromium.open(web!.url, who);

interface StepStatus {
  step: number;
  name: string;
  status: string;
  chunksDone: number;
  chunksTotal: number;
  finishedAt: string | null;
}

/** The steps table as the page should show what the backfill recorded (cells as text). */
async function recordedSteps(): Promise<string[][]> {
  return (await backfillSteps<StepStatus>(stores.env)).map((s) => [
    String(s.step),
    s.name,
    s.status,
    `${s.chunksDone}/${s.chunksTotal}`,
    s.finishedAt ? s.finishedAt.replace('T', ' ').replace('Z', '') : '',
    '',
  ]);
}

interface Shown {
  state: string;
  done: number;
  total: number;
}
/** A steps table as shown: state and chunks per step. */
const shownSteps = (rows: string[][]): Shown[] =>
  rows.map((r) => {
    const [done, total] = r[3]!.split('/').map(Number);
    return { state: r[2]!, done: done!, total: total! };
  });

beforeAll(async () => {
  [stores, chromium] = await Promise.all([startStores({ redis: true }), startChromium()]);
  const legacy = await startWeb({ ...stores.env, ...LEGACY_ENV });
  try {
    project = await createProject(stores.env, 'upgrading');
    await sendHistory(legacy.url);
  } finally {
    await legacy.stop();
  }
  [users.owner, users.member, users.projectOwner] = await Promise.all([
    createUser('admin@example.com', 'owner', 'deployment'),
    createUser('member@example.com', 'member'),
    createUser('project-owner@example.com', 'owner'),
  ]);
  // The operator's knobs of the chain, as the backfill integration test sets them.
  await stores.pool.query('UPDATE background_migrations SET args = args || $1::jsonb', [
    JSON.stringify(CHUNKING),
  ]);
  web = await startWeb({ ...stores.env, ...DUAL_ENV });
});

afterAll(async () => {
  const left = await chromium?.close();
  await stopStores(stores, web, worker);
  expect(left).toEqual({ blocked: [], errors: [] });
});

describe('the background migrations page', () => {
  it('is not shown to a member', async () => {
    const page = await tab(users.member);
    await page.getByRole('link', { name: 'migration' }).click();
    await page.getByText('the background migrations page is for owners').waitFor();
    expect(await page.getByRole('heading', { name: 'Background migrations' }).count()).toBe(0);
    await screenshot(page, 'migration-member');
  });

  it("shows a project's owner its producers, and the backfill only to deployment admins", async () => {
    const page = await tab(users.projectOwner);
    await page.getByRole('link', { name: 'migration' }).click();
    await page.getByRole('heading', { name: 'Background migrations' }).waitFor();
    await page.getByText(/shown to deployment admins/).waitFor();
    expect(await page.getByRole('table', { name: 'Backfill steps' }).count()).toBe(0);
    const producers = await bodyRows(page.getByRole('table', { name: 'Producers' }));
    expect(new Set(producers.map((r) => r[0]))).toEqual(new Set([project.publicKey]));
    await screenshot(page, 'migration-project-owner');
  });

  it('moves while the worker runs the backfill: pending, running with chunks done, finished', async () => {
    const page = await tab(users.owner);
    await page.getByRole('link', { name: 'migration' }).click();
    await page.getByRole('heading', { name: 'Background migrations' }).waitFor();
    await page
      .getByRole('main')
      .getByText(/^Release 4 · write mode dual · .* · the historic backfill may run$/)
      .waitFor();
    const table = page.getByRole('table', { name: 'Backfill steps' });
    await page.getByRole('cell', { name: 'pending' }).first().waitFor();
    const before = await bodyRows(table);
    expect(before).toEqual(await recordedSteps());
    expect(shownSteps(before).map((s) => s.state)).toEqual([
      'pending',
      'pending',
      'pending',
      'pending',
      'dormant',
    ]);
    await screenshot(page, 'migration-before');

    worker = await startWorker({ ...stores.env, ...DUAL_ENV });
    // The page refreshes itself; the test only reads it, twice a second, until steps 1-4 finished.
    const seen: Shown[][] = [shownSteps(before)];
    let runningShot = false;
    const deadline = Date.now() + CHAIN_DEADLINE_MS;
    for (;;) {
      const now = shownSteps(await bodyRows(table));
      if (JSON.stringify(now) !== JSON.stringify(seen.at(-1))) seen.push(now);
      const midStep = now.some((s) => s.state.startsWith('running') && s.done > 0 && s.done < s.total);
      if (midStep && !runningShot) {
        await screenshot(page, 'migration-running');
        runningShot = true;
      }
      if (now.slice(0, 4).every((s) => s.state === 'finished')) break;
      if (Date.now() > deadline)
        throw new Error(`the chain did not finish in time; the page showed ${JSON.stringify(seen)}`);
      await page.waitForTimeout(500);
    }
    await screenshot(page, 'migration-finished');

    // A step was seen running part-way: "running (by <worker>)" with some chunks of its total done.
    expect(
      seen.some((steps) =>
        steps.some((s) => /^running \(by .+\)$/.test(s.state) && s.done > 0 && s.done < s.total),
      ),
    ).toBe(true);
    // Nothing went backwards: per step, the state only advances and chunks done only grow.
    const order = (state: string) =>
      ['dormant', 'pending', 'running', 'finished'].indexOf(state.split(' ')[0]!);
    for (let step = 0; step < 5; step++) {
      const history = seen.map((steps) => steps[step]!);
      for (let i = 1; i < history.length; i++) {
        expect(order(history[i]!.state)).toBeGreaterThanOrEqual(order(history[i - 1]!.state));
        expect(history[i]!.done).toBeGreaterThanOrEqual(history[i - 1]!.done);
      }
    }
    // The steps that read the legacy tables went through several chunks, all of them done.
    const last = seen.at(-1)!;
    for (const s of last.slice(0, 3)) {
      expect(s.total).toBeGreaterThan(1);
      expect(s.done).toBe(s.total);
    }
    // The page ends where the backfill's own status says the chain is (its next refresh at most).
    await expect
      .poll(async () => JSON.stringify(await bodyRows(table)))
      .toBe(JSON.stringify(await recordedSteps()));
  });
});
