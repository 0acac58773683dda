/**
 * The operator installed from the Helm chart as a Pod upgrades a release 3 deployment receiving
 * traffic from the `langfuse` 3.x SDK and an OTel exporter through Legacy, Dual and the backfill
 * Jobs to EventsOnly. Faults in the same run: the operator Pod is deleted at two random moments,
 * and a backfill Job's Pod is deleted mid-step (the step fails, is retried, the chain completes).
 * The data is checked at the end: every legacy trace and observation is in events_full.
 */
import { type V1Pod, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sleep, waitFor } from '../cluster/wait.ts';
import { Deployment } from './operator-env.ts';
import {
  afterCutover,
  condition,
  countData,
  createRelease3,
  deploymentEnv,
  isTrue,
  localPlatform,
  type Platform,
  type Project,
  retryBackfill,
  sendTraffic,
  walkToEventsOnly,
} from './scenario.ts';

const NAME = 'upgrade';
let d: Deployment;
let p: Platform;
let project: Project;
const operatorPodsDeleted: string[] = [];

/** Deletes the operator Pod after a random delay, as a node drain or an eviction would. */
async function deleteOperatorPodSoon(maxDelayMs = 5_000) {
  await sleep(Math.floor(Math.random() * maxDelayMs));
  operatorPodsDeleted.push(await d.deleteOperatorPod());
}

/**
 * Deletes the Pod of backfill step `step` as soon as it is bound to the node, i.e. while the node
 * agent starts its process. A step takes about a second on this data, no longer than the Pod's
 * running status takes to show in the API: waiting for "running" missed it in practice.
 */
function killBackfillPodMidStep(step: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let done = false;
    let request: { abort(): void } | undefined;
    const finish = (error?: Error, name?: string) => {
      if (done) return;
      done = true;
      request?.abort();
      if (error) reject(error);
      else resolve(name!);
    };
    new Watch(d.cluster.kubeconfig)
      .watch(
        `/api/v1/namespaces/${d.ns}/pods`,
        { labelSelector: `app.kubernetes.io/component=backfill-${step}` },
        (_type, pod: V1Pod) => {
          const finished = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
          if (done || !pod.spec?.nodeName || finished || pod.metadata?.deletionTimestamp) return;
          const name = pod.metadata!.name!;
          d.core()
            .deleteNamespacedPod({ name, namespace: d.ns, gracePeriodSeconds: 0 })
            .then(() => finish(undefined, name), finish);
        },
        (err) => {
          if (!done) finish(err ?? new Error('the pod watch ended before the backfill Pod ran'));
        },
      )
      .then((r) => {
        request = r;
      }, finish);
    setTimeout(() => finish(new Error(`no backfill-${step} Pod ran within 3 minutes`)), 180_000).unref();
  });
}

beforeAll(async () => {
  d = await Deployment.start('obs', { operator: 'chart' });
  await d.installChart();
  p = localPlatform(d);
});
afterAll(async () => {
  await d?.stop();
});

it('walks a release 3 deployment to EventsOnly with the chart-installed operator, through faults, losing nothing', async () => {
  const created = await createRelease3(p, NAME);
  project = created.project;
  expect(created.o.status?.observedGeneration).toBe(created.o.metadata.generation);
  expect(deploymentEnv(p, NAME, 'web')['SERVICE_RELEASE']).toBe('3');
  const historic = await sendTraffic(p, project, 'v3');
  const v3 = await waitFor(
    'release 3 traffic in the legacy tables',
    async () => {
      const c = await countData(p, project.projectId);
      return c.traces >= 10 && c.observations >= 15 ? c : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 1_000 },
  );
  expect(v3.eventsFull).toBe(0);

  let killedStep = 0;
  let killedPod = '';
  const { final, steps, sent } = await walkToEventsOnly(p, NAME, project, {
    atLegacy: async (o) => {
      expect(isTrue(o, 'PreflightPassed')).toBe(true);
      for (const component of ['web', 'worker'] as const) {
        const env = deploymentEnv(p, NAME, component);
        expect(env['SERVICE_RELEASE'] ?? '4').toBe('4');
        expect(env['SERVICE_MIGRATION_V4_WRITE_MODE']).toBe('legacy');
      }
      // The first fault: the operator Pod goes away while Dual is being applied.
      void deleteOperatorPodSoon();
    },
    atDual: async () => {
      for (const component of ['web', 'worker'] as const) {
        const env = deploymentEnv(p, NAME, component);
        expect(env['SERVICE_MIGRATION_V4_WRITE_MODE']).toBe('dual');
        expect(env['SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR']).toBe('dual_write');
      }
      expect(
        deploymentEnv(p, NAME, 'worker')['SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL'],
      ).toBe('true');
    },
    duringBackfill: async () => {
      killedStep = 1 + Math.floor(Math.random() * 4);
      killedPod = await killBackfillPodMidStep(killedStep);
      const stalled = await p.waitFor(NAME, `Stalled on backfill step ${killedStep}`, (x) =>
        isTrue(x, 'Stalled'),
      );
      expect(condition(stalled, 'Stalled')?.message).toMatch(/retry-backfill/);
      // The second fault: the operator Pod goes away around the retry.
      retryBackfill(p, NAME, killedStep);
      await deleteOperatorPodSoon();
    },
    beforeApproval: async (o) => {
      expect(isTrue(o, 'PropagationHealthy')).toBe(true);
      expect(isTrue(o, 'BackfillComplete')).toBe(true);
      expect(o.status?.state).toBe('Dual');
    },
  });
  expect(killedStep).toBeGreaterThan(0);
  expect(operatorPodsDeleted).toHaveLength(2);
  expect(final.status?.observedGeneration).toBe(final.metadata.generation);
  for (const component of ['web', 'worker'] as const) {
    const env = deploymentEnv(p, NAME, component);
    expect(env['SERVICE_MIGRATION_V4_WRITE_MODE']).toBe('events_only');
    expect(env['SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR']).toBe('direct');
  }

  // Every trace and observation of release 3, Legacy and Dual is in events_full.
  const moved = await countData(p, project.projectId);
  const sdkTraces = [historic, ...sent].flatMap((s) => s.sdkTraces);
  const otelTraces = [historic, ...sent].flatMap((s) => s.otelTraces);
  expect(moved.traces).toBe(sdkTraces.length + otelTraces.length);
  // Each SDK trace carries a span and a generation, each OTel trace a root span and a child.
  expect(moved.observations).toBe(2 * sdkTraces.length + 2 * otelTraces.length);
  expect(moved.missingTraces).toBe(0);
  expect(moved.missingObservations).toBe(0);
  expect(moved.eventsFull).toBeGreaterThanOrEqual(moved.traces + moved.observations - otelTraces.length);

  const after = await afterCutover(p, project);
  expect(after.batchStatus).toBe(207);
  expect(after.batchBody.errors.map((e) => e.status)).toEqual([400, 400]);
  expect(after.legacyStatus).toBe(404);
  expect(after.directRows).toBeGreaterThan(0);
  // Nothing new in the legacy tables after the cutover.
  expect((await countData(p, project.projectId)).traces).toBe(moved.traces);
  console.log(
    `steps: ${steps.map((s) => `${s.name} ${(s.ms / 1000).toFixed(1)}s`).join('; ')}; killed backfill step ${killedStep} (${killedPod}); operator pods deleted ${operatorPodsDeleted.join(', ')}`,
  );
});
