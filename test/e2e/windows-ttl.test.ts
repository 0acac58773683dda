/**
 * Maintenance windows and Job TTLs on the local cluster, on one deployment installed from the chart:
 * - a move Legacy -> Dual (with the backfill) asked for outside `spec.maintenanceWindows` is held:
 *   the status names the window in `blockedBy`, and the cluster itself shows no new Job and web and
 *   worker Deployments still in Legacy; once the window is patched to one open now, the Deployments
 *   roll to Dual and a backfill Job starts.
 * - the Jobs the operator creates carry `spec.jobs.ttlSecondsAfterFinished`; the node's
 *   kube-controller-manager runs the TTL-after-finished controller, which deletes a finished Job
 *   once its TTL has passed, while `status.jobs` still records that Job's result.
 * - `spec.networkPolicy.enabled` makes the operator own the two ingress NetworkPolicies on the
 *   real API server, and turning it off removes them.
 */
import { AppsV1Api, BatchV1Api, NetworkingV1Api, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDeployment, localPlatform } from '../../cluster/scenario/local-deployment.ts';
import { applySpec, isTrue, type Obsvc, SPECS } from '../../cluster/scenario/scenario.ts';
import { waitFor } from '../../cluster/wait.ts';
import { JOB_TTL_LIMITS } from '../../operator/api/v1alpha1.ts';
import { localCluster } from '../cluster/testing.ts';

const NAME = 'demo';
const NS = 'obs-windows';
/** The shortest TTL the CRD allows. */
const TTL = JOB_TTL_LIMITS.min;
/** Opens daily twelve hours after the start of this hour, for an hour: closed while this test runs. */
const OPENS_AT = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 + 12 * 3_600_000);
const CLOSED = { cron: `0 ${OPENS_AT.getUTCHours()} * * *`, duration: '1h' };
/** Opens every minute for an hour: open now. */
const OPEN = { cron: '* * * * *', duration: '1h' };

let d: LocalDeployment;

const apply = (extra: Record<string, unknown>) =>
  applySpec(localPlatform(d), NAME, { jobs: { ttlSecondsAfterFinished: TTL }, ...extra });

const batch = () => d.cluster.kubeconfig.makeApiClient(BatchV1Api);
const jobs = async (): Promise<V1Job[]> => (await batch().listNamespacedJob({ namespace: NS })).items;
const finished = (j: V1Job) =>
  j.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');

/** The write mode each Deployment's Pod template sets, and the Deployments' generations. */
async function deployments() {
  const list = await d.cluster.kubeconfig
    .makeApiClient(AppsV1Api)
    .listNamespacedDeployment({ namespace: NS });
  return Object.fromEntries(
    list.items.map((x) => [
      x.metadata!.name!,
      {
        generation: x.metadata!.generation,
        writeMode: x.spec!.template.spec!.containers[0]!.env?.find(
          (e) => e.name === 'SERVICE_MIGRATION_V4_WRITE_MODE',
        )?.value,
      },
    ]),
  );
}

const current = (o: Obsvc) => o.status?.observedGeneration === o.metadata.generation;

beforeAll(async () => {
  d = await LocalDeployment.start(localCluster(), NS);
  await d.installChart();
}, 600_000);
afterAll(async () => {
  await d?.stop();
}, 600_000);

describe('maintenance windows and Job TTLs on the real node', () => {
  /** The first backfill Job, as read when it started. */
  let backfill: V1Job;

  it('deploys Legacy outside a window (a first deployment is not held), its Jobs with the TTL', async () => {
    apply({ ...SPECS.legacy, maintenanceWindows: [CLOSED] });
    await d.waitFor(NAME, 'Legacy and Ready', (x) => x.status?.state === 'Legacy' && isTrue(x, 'Ready'));
    const all = await jobs();
    expect(all.length).toBeGreaterThan(0);
    for (const j of all) expect(j.spec?.ttlSecondsAfterFinished, j.metadata?.name).toBe(TTL);
  });

  it('holds the move to Dual outside the window: blockedBy names it, no Job or rollout starts', async () => {
    const jobsBefore = (await jobs()).map((j) => j.metadata!.name!).sort();
    const before = await deployments();
    expect(Object.values(before).map((x) => x.writeMode)).toEqual(['legacy', 'legacy']);
    apply({ ...SPECS.dual, maintenanceWindows: [CLOSED] });
    const held = await d.waitFor(
      NAME,
      'the move held for the window',
      (x) => current(x) && (x.status?.blockedBy ?? []).some((b) => b.includes('maintenance window')),
    );
    const opensAt = OPENS_AT.toISOString();
    expect(held.status?.blockedBy).toContain(
      `the move Legacy -> Dual waits for the next maintenance window (spec.maintenanceWindows), which opens at ${opensAt}`,
    );
    expect(held.status?.state).toBe('Legacy');
    // The cluster, not the operator's word: the same Jobs (none new) and untouched Deployments.
    const names = (await jobs()).map((j) => j.metadata!.name!).sort();
    expect(names.filter((n) => !jobsBefore.includes(n))).toEqual([]);
    expect(await deployments()).toEqual(before);
  });

  it('starts the move once the window is open: Deployments roll to Dual, a backfill Job starts', async () => {
    apply({ ...SPECS.dual, maintenanceWindows: [OPEN] });
    await waitFor(
      'web and worker Deployments in Dual',
      async () => {
        const now = await deployments();
        return Object.values(now).every((x) => x.writeMode === 'dual') ? now : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );
    backfill = await waitFor(
      'the backfill Job of step 1',
      async () => (await jobs()).find((j) => /-backfill-1-/.test(j.metadata!.name!)),
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );
    expect(backfill.spec?.ttlSecondsAfterFinished).toBe(TTL);
    const o = await d.get(NAME);
    expect((o.status?.blockedBy ?? []).filter((b) => b.includes('maintenance window'))).toEqual([]);
  });

  it("lets the node's TTL controller delete a finished Job while status.jobs keeps its result", async () => {
    // Controllers act as their own service accounts here (--use-service-account-credentials): the
    // account exists only when kube-controller-manager started the TTL-after-finished controller.
    await d
      .core()
      .readNamespacedServiceAccount({ name: 'ttl-after-finished-controller', namespace: 'kube-system' });
    const name = backfill.metadata!.name!;
    const done = await waitFor(
      `Job ${name} finished`,
      async () => (await jobs()).find((j) => j.metadata?.name === name && finished(j)),
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );
    expect(done.status?.succeeded, JSON.stringify(done.status)).toBe(1);
    const completed = Date.parse(String(done.status?.completionTime));
    await waitFor(
      `Job ${name} deleted by its TTL`,
      async () => {
        const left = await jobs();
        return left.some((j) => j.metadata?.name === name) ? undefined : true;
      },
      { timeoutMs: (TTL + 120) * 1000, intervalMs: 1_000 },
    );
    // The TTL controller, not an early delete: gone no sooner than the TTL after it finished.
    expect(Date.now()).toBeGreaterThanOrEqual(completed + TTL * 1000);
    const o = (await d.get(NAME)) as Obsvc & {
      status: { jobs?: { purpose: string; name: string; result: string }[] };
    };
    expect(o.status.jobs?.find((j) => j.purpose === 'backfill-1')).toMatchObject({
      name,
      result: 'Succeeded',
    });
  });

  it('renders the opt-in NetworkPolicies (web: HTTP and OTLP/gRPC; worker: its port) and removes them when turned off', async () => {
    const policies = async () =>
      (
        await d.cluster.kubeconfig
          .makeApiClient(NetworkingV1Api)
          .listNamespacedNetworkPolicy({ namespace: NS })
      ).items;
    apply({ ...SPECS.dual, maintenanceWindows: [OPEN], networkPolicy: { enabled: true } });
    const rendered = await waitFor(
      'both NetworkPolicies',
      async () => {
        const items = await policies();
        return items.length === 2 ? items : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1_000 },
    );
    const ports = Object.fromEntries(
      rendered.map((p) => [
        p.metadata!.name!,
        p.spec!.ingress!.flatMap((r) => (r.ports ?? []).map((x) => x.port)).sort(),
      ]),
    );
    expect(ports).toEqual({ [`${NAME}-web`]: [3000, 4317], [`${NAME}-worker`]: [3030] });
    apply({ ...SPECS.dual, maintenanceWindows: [OPEN] });
    await waitFor(
      'the NetworkPolicies removed',
      async () => ((await policies()).length === 0 ? true : undefined),
      {
        timeoutMs: 120_000,
        intervalMs: 1_000,
      },
    );
    await d.waitFor(NAME, 'Ready without the policies', (x) => isTrue(x, 'Ready'));
  });
});
