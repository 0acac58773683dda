/**
 * The results of the preflight, migrate and cleanup Jobs outlive their Pods, on real PostgreSQL,
 * Redis and the analytics server. Each command runs as the operator's Job runs it (the literal
 * environment `renderJob` gives its container, with the datastores' URLs), records its result under
 * the Job's name as it ends, a real worker process reports it (`GET /api/job-results`, read with the
 * operator's own reader), and the planner takes it where the Job itself says otherwise: its Pod
 * killed after the work (the Job failed), or the Job gone before the operator saw it complete.
 */

import type { V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDefaults } from '../../operator/api/effective.ts';
import type { MigrationState, ObservabilityService } from '../../operator/api/v1alpha1.ts';
import { plan } from '../../operator/planner/plan.ts';
import type { ObservedJob, World } from '../../operator/planner/types.ts';
import { type JobPurpose, renderJob } from '../../operator/render/jobs.ts';
import { fetchJobResults } from '../../operator/runtime/probes.ts';
import type { JobResultsReport } from '../../server/contract/worker-api.ts';
import { minimalService, minimalSpec } from '../fixtures/obsvc-spec.ts';
import { rolledOut } from '../fixtures/operator/rolled-out.ts';
import { cli, type Env, startWorker, type WebServer } from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';

const SINCE = '2026-03-01T11:00:00.000Z';
const pass = { state: 'Dual' as const, since: SINCE, image: 'observatory:dev' };
const upgrading = minimalService(
  { ...minimalSpec('Dual'), upgrade: { backupConfirmed: true } },
  {},
  { state: 'Release3', deployedImage: 'observatory:dev', target: pass },
);
const cleaningUp = minimalService(
  { ...minimalSpec('EventsOnly'), backfill: { enabled: false }, cleanup: { truncateLegacyTables: true } },
  {},
  {
    state: 'EventsOnly',
    deployedImage: 'observatory:dev',
    target: { state: 'EventsOnly', since: SINCE, image: 'observatory:dev', schemaMigrated: true },
  },
);

let stores: Stores & Given<{ redis: true }>;
let worker: WebServer;

/** The Job the operator renders for this step, and the literal environment of its container. */
function jobOf(
  o: ObservabilityService,
  purpose: JobPurpose,
  state: MigrationState,
): { job: V1Job; env: Env } {
  const ctx = { meta: o.metadata, spec: withDefaults(o.spec) };
  // The pass's Jobs are named after the pass (as the planner's steps name them); the cleanup is not.
  const inputs = purpose === 'cleanup' ? undefined : { pass: SINCE };
  const job = renderJob(ctx, {
    purpose,
    state,
    image: o.spec.image,
    attempt: 0,
    ...(inputs ? { inputs } : {}),
  });
  const container = job.spec!.template.spec!.containers[0]!;
  const env = Object.fromEntries(
    (container.env ?? []).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])),
  );
  return { job, env };
}

/** Runs the Job's command as its Pod does (`args` of the rendered container). */
async function runAsJob(o: ObservabilityService, purpose: JobPurpose, state: MigrationState) {
  const { job, env } = jobOf(o, purpose, state);
  const args = job.spec!.template.spec!.containers[0]!.args!;
  return { name: job.metadata!.name!, run: await cli(args, { ...env, ...stores.env }) };
}

const report = async (): Promise<JobResultsReport> => {
  const r = await fetchJobResults(new URL(worker.url).hostname, Number(new URL(worker.url).port));
  if (!r) throw new Error('the worker gave no job results report');
  return r;
};

/** What the planner decides with the worker's report as observe.ts gives it. */
async function planWith(o: ObservabilityService, state: MigrationState, jobs: ObservedJob[]) {
  const jobResults = {
    known: true as const,
    results: (await report()).results.map(({ job, result, detail }) => ({ job, result, detail })),
  };
  const world: World = {
    deployments: rolledOut(o, state),
    services: {},
    jobs,
    producers: { known: true, producers: [] },
    backfill: { known: true, steps: [] },
    jobResults,
    now: new Date(),
  };
  return plan({ object: o, world });
}

const killed = (name: string, purpose: JobPurpose): ObservedJob => ({
  name,
  purpose,
  outcome: 'failed',
  reason: 'BackoffLimitExceeded',
  message: 'Job has reached the specified backoff limit',
});

beforeAll(async () => {
  stores = await startStores({ redis: true });
  // A release 3 deployment, migrated by hand (no Job: nothing recorded), and its worker.
  const release3 = { ...stores.env, SERVICE_RELEASE: '3' };
  const migrated = await cli(['migrate', 'up'], release3);
  expect(migrated.code, migrated.stderr).toBe(0);
  worker = await startWorker(release3);
}, 180_000);

afterAll(async () => {
  await stopStores(stores, worker);
});

describe('the results of the preflight, migrate and cleanup Jobs', () => {
  const recorded = async (name: string) => (await report()).results.find((r) => r.job === name);

  it('preflight and migrate: recorded under their Job names, reported, and counted though the Pod was killed or the Job went unseen', async () => {
    const preflight = await runAsJob(upgrading, 'preflight', 'Dual');
    expect(preflight.run.code, preflight.run.stderr).toBe(0);
    expect(await recorded(preflight.name)).toMatchObject({
      command: 'preflight',
      result: 'succeeded',
      detail: 'every check passed',
    });
    const afterPreflight = await planWith(upgrading, 'Release3', [killed(preflight.name, 'preflight')]);
    expect(afterPreflight.status.target?.preflightPassed).toBe(true);
    expect(afterPreflight.status.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('False');

    const migrate = await runAsJob(upgrading, 'migrate', 'Dual');
    expect(migrate.run.code, migrate.run.stderr).toBe(0);
    const record = await recorded(migrate.name);
    expect(record).toMatchObject({ command: 'migrate up', result: 'succeeded' });
    expect(record!.detail).toMatch(/^analytics schema version 47 of 47 known/);
    expect(Date.parse(record!.recordedAt)).toBeGreaterThan(Date.now() - 120_000);
    // The migrate Job is gone (its TTL ran out while the operator was down): no Job, no status.jobs.
    const afterMigrate = await planWith({ ...upgrading, status: afterPreflight.status }, 'Release3', []);
    expect(afterMigrate.status.target?.schemaMigrated).toBe(true);
    expect(afterMigrate.actions.filter((a) => a.kind === 'createJob')).toEqual([]);
  }, 240_000);

  it('cleanup: recorded under its Job name and counted though its Pod was killed after the truncate', async () => {
    const cleanup = await runAsJob(cleaningUp, 'cleanup', 'EventsOnly');
    expect(cleanup.run.code, cleanup.run.stderr).toBe(0);
    expect(await recorded(cleanup.name)).toMatchObject({
      command: 'cleanup truncate-legacy-tables',
      result: 'succeeded',
    });
    const afterCleanup = await planWith(cleaningUp, 'EventsOnly', [killed(cleanup.name, 'cleanup')]);
    expect(afterCleanup.status.legacyTablesTruncated).toBe(true);
    expect(afterCleanup.actions.filter((a) => a.kind === 'createJob')).toEqual([]);
    expect(afterCleanup.status.jobs).toContainEqual(
      expect.objectContaining({ purpose: 'cleanup', name: cleanup.name, result: 'Succeeded' }),
    );
  }, 240_000);

  it('a failure is recorded with what the command said; a later success of the same Job replaces it, and stays', async () => {
    const name = 'obs-migrate-retried';
    const job = { ...stores.env, SERVICE_JOB_NAME: name };
    const ahead = await cli(['migrate', 'up', '--to', '48'], job);
    expect(ahead.code).toBe(1);
    expect(await recorded(name)).toMatchObject({
      result: 'failed',
      detail: 'no migration was found for version 48',
    });
    expect((await cli(['migrate', 'up'], job)).code).toBe(0);
    expect(await recorded(name)).toMatchObject({ result: 'succeeded' });
    // Kubernetes' next Pod of a Job whose first was killed after the work cannot undo it.
    expect((await cli(['migrate', 'up', '--to', '48'], job)).code).toBe(1);
    expect(await recorded(name)).toMatchObject({ result: 'succeeded' });
  }, 240_000);

  it('a command run by hand (no Job name) records nothing', async () => {
    const before = (await report()).results.length;
    const run = await cli(['migrate', 'up'], stores.env);
    expect(run.code, run.stderr).toBe(0);
    expect((await report()).results).toHaveLength(before);
  }, 240_000);
});
