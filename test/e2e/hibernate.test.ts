/**
 * Hibernation on the local cluster, one deployment installed from the chart, with data to
 * backfill: in Dual, with the backfill throttled so a step lasts, `spec.hibernate: true` while
 * step 1 is part-way through its chunks. The cluster itself, not only the status, must show web and
 * worker at zero and the step's Job gone, the checkpoint must not move while hibernated, and the
 * status must keep the state, its settings and the backfill cursor. Waking brings web and worker
 * back in the same mode, the step resumes from its checkpoint (never below it), and every legacy
 * row reaches events_full.
 */
import { AppsV1Api, BatchV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDeployment, localPlatform } from '../../cluster/scenario/local-deployment.ts';
import {
  applySpec,
  condition,
  createRelease3,
  isTrue,
  type Obsvc,
  type Platform,
  type Project,
  SPECS,
  sendTraffic,
  waitAllMoved,
} from '../../cluster/scenario/scenario.ts';
import { waitFor } from '../../cluster/wait.ts';
import { localCluster } from '../cluster/testing.ts';
import { backfillCheckpoint } from '../fixtures/backfill.ts';

const NAME = 'parked';
const NS = 'obs-hibernate';
/** Small chunks with a pause after each: step 1 stays part-way long enough to hibernate in it. */
const BACKFILL = { enabled: true, chunkRows: 5, throttleMs: 5_000 };

let d: LocalDeployment;
let p: Platform;
let project: Project;

beforeAll(async () => {
  d = await LocalDeployment.start(localCluster(), NS);
  await d.installChart();
  p = localPlatform(d);
}, 600_000);
afterAll(async () => {
  await d?.stop();
}, 600_000);

/** The step's checkpoint in background_migrations: chunks done and in all. */
const checkpoint = (step: number) => backfillCheckpoint(d.pg.url, step);

function setHibernate(value: boolean): void {
  const r = d.kubectl([
    'patch',
    'obsvc',
    NAME,
    '-n',
    NS,
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { hibernate: value } }),
  ]);
  if (r.code !== 0) throw new Error(r.stderr);
}

async function replicas(): Promise<Record<string, number | undefined>> {
  const list = await d.cluster.kubeconfig
    .makeApiClient(AppsV1Api)
    .listNamespacedDeployment({ namespace: NS });
  return Object.fromEntries(list.items.map((x) => [x.metadata!.name!, x.spec?.replicas]));
}

async function backfillJobs(step: number): Promise<string[]> {
  const list = await d.cluster.kubeconfig.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: NS });
  return list.items
    .filter((j) => new RegExp(`-backfill-${step}-`).test(j.metadata!.name!) && !j.metadata?.deletionTimestamp)
    .map((j) => j.metadata!.name!);
}

describe('hibernation in the middle of a backfill, on the real node', () => {
  let before: Obsvc;
  let parkedAt: { done: number; total: number };
  let stepJob: string | undefined;

  it('deploys release 3 with data, then Dual with a throttled backfill', async () => {
    ({ project } = await createRelease3(p, NAME));
    await sendTraffic(p, project, 'before', 20);
    applySpec(p, NAME, { ...SPECS.dual, backfill: BACKFILL });
    await d.waitFor(NAME, 'Dual', (x) => x.status?.state === 'Dual', 330_000);
  });

  it('hibernates part-way through step 1: web and worker at zero, the step stopped, everything kept', async () => {
    parkedAt = await waitFor(
      'backfill step 1 part-way through its chunks',
      async () => {
        const c = await checkpoint(1);
        return c.done > 0 && c.done < c.total ? c : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 200 },
    );
    [stepJob] = await backfillJobs(1);
    expect(stepJob).toBeDefined();
    before = await d.get(NAME);
    setHibernate(true);
    const parked = await d.waitFor(
      NAME,
      'Hibernated',
      (x) => x.status?.phase === 'Hibernated' && isTrue(x, 'Hibernated'),
      300_000,
    );
    // The cluster's word: no web or worker Pod, both Deployments at zero, the step's Job gone.
    expect(await d.pods('web')).toEqual([]);
    expect(await d.pods('worker')).toEqual([]);
    const counts = await replicas();
    expect([counts[`${NAME}-web`], counts[`${NAME}-worker`]]).toEqual([0, 0]);
    expect(await backfillJobs(1)).toEqual([]);
    const status = parked.status as NonNullable<Obsvc['status']> & Record<string, unknown>;
    const kept = (s: Record<string, unknown> | undefined) => [
      s?.['state'],
      s?.['settings'],
      s?.['deployedImage'],
      (s?.['backfill'] as { completedSteps?: number } | undefined)?.completedSteps,
    ];
    expect(kept(status)).toEqual(kept(before.status as Record<string, unknown>));
    expect(status['hibernation']).toMatchObject({ phase: 'Hibernated', stoppedJob: stepJob });
    expect(condition(parked, 'Ready')).toMatchObject({ status: 'True', reason: 'Hibernated' });
    // Parked: the checkpoint does not move (the chunk in flight when the Job went may have ended).
    const atRest = await checkpoint(1);
    expect(atRest.done).toBeGreaterThanOrEqual(parkedAt.done);
    await new Promise((r) => setTimeout(r, 30_000));
    expect(await checkpoint(1)).toEqual(atRest);
    expect(await backfillJobs(1)).toEqual([]);
    parkedAt = atRest;
  });

  it('wakes to the same point: same mode and settings, the step resumes from its checkpoint', async () => {
    setHibernate(false);
    await d.waitFor(NAME, 'awake', (x) => condition(x, 'Hibernated')?.reason === 'Awake', 300_000);
    const resumed = await waitFor(
      'backfill step 1 running again',
      async () => ((await backfillJobs(1)).length > 0 ? await checkpoint(1) : undefined),
      { timeoutMs: 300_000, intervalMs: 500 },
    );
    // Resumed, not restarted: the same chunks, none of the finished ones undone.
    expect(resumed.total).toBe(parkedAt.total);
    expect(resumed.done).toBeGreaterThanOrEqual(parkedAt.done);
    expect(await backfillJobs(1)).toEqual([stepJob!]);
    const done = await d.waitFor(
      NAME,
      'backfill complete and Ready',
      (x) => isTrue(x, 'BackfillComplete') && isTrue(x, 'Ready'),
      900_000,
    );
    expect((done.status as Record<string, unknown>)['settings']).toEqual(
      (before.status as Record<string, unknown>)['settings'],
    );
    expect(done.status?.state).toBe('Dual');
    await waitAllMoved(p, project.projectId);
  }, 1_000_000);
});
