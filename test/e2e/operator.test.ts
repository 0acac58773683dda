/**
 * The operator end to end on the local cluster, installed from the chart: the real server and
 * worker as Pods on real datastores. A release 3 deployment walks to Legacy, Dual, through the backfill Jobs (one of them
 * failing and retried) and, after approval, to EventsOnly, with the operator SIGKILLed at moments
 * along the way; a stuck propagation holds the cutover until it recovers; forbidden specs are
 * refused at admission. Production settings on the way: every Pod-template field on every role (and
 * every operator Pod value of the chart) in namespaces that enforce the restricted Pod Security
 * Standard, checked on the live Pods; web Pods drained through the Eviction API during Dual against
 * their PodDisruptionBudget; a rotated datastore Secret rolling the Pods; and every status of the
 * walk judged by the kstatus library and the chart's Argo CD health check.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiException, AppsV1Api, BatchV1Api, PolicyV1Api } from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { Langfuse } from 'langfuse';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  LocalDeployment,
  OPERATOR_NAMESPACE,
  RESTRICTED_LABELS,
} from '../../cluster/scenario/local-deployment.ts';
import { condition, DATASTORES, isTrue } from '../../cluster/scenario/scenario.ts';
import { sleep, waitFor } from '../../cluster/wait.ts';
import { isReady, localCluster } from '../cluster/testing.ts';
import { findFlicker, narrative } from '../fixtures/operator/condition-history.ts';
import { expectedHealth } from '../tools/gitops-health.ts';
import { chartDir } from '../tools/paths.ts';
import { ClusterTruth } from './cluster-truth.ts';
import { drain } from './drain.ts';
import { OperatorFleet } from './operator-fleet.ts';
import {
  everyTemplateField,
  expectOperatorValuesOn,
  expectTemplateOn,
  OPERATOR_VALUES,
  PRIORITY_CLASS,
  supportObjects,
} from './pod-template-fixture.ts';
import { StatusRecorder } from './status-recorder.ts';
import { untruths } from './status-truth.ts';

const NAME = 'demo';
let d: LocalDeployment;
let project: { publicKey: string; secretKey: string };
let statuses: StatusRecorder | undefined;
let truth: ClusterTruth | undefined;
let fleet: OperatorFleet | undefined;
/** Two operator replicas: one leads, the other stands by (and must not reconcile). */
const OPERATOR_REPLICAS = 2;
const MIN_KILLS = 10;

const base = {
  apiVersion: 'observatory.dev/v1alpha1',
  kind: 'ObservabilityService',
  metadata: { name: NAME, namespace: 'obs' },
};
const spec = (extra: Record<string, unknown>) => ({
  image: 'observatory:dev',
  datastores: DATASTORES,
  // Two web Pods: their budget (on by default above one replica) lets a drain take one at a time.
  web: { replicas: 2, template: everyTemplateField('web') },
  worker: { replicas: 1, template: everyTemplateField('worker') },
  jobs: { template: everyTemplateField('jobs') },
  cutover: { approval: 'Manual', producerQuietPeriod: '1m' },
  ...extra,
});

/** Applies as GitOps would (server-side apply of the whole spec) and expects acceptance. */
function apply(extra: Record<string, unknown>) {
  const r = d.apply({ ...base, spec: spec(extra) });
  expect(r.code, r.stderr).toBe(0);
}

/** Deletes the operator Pod after a random delay, as a crash or node loss mid-step would. */
async function crashOperatorSoon(maxDelayMs = 4_000) {
  await sleep(Math.floor(Math.random() * maxDelayMs));
  await d.deleteOperatorPod();
}

/** What the walk is in the middle of, for the record of each operator kill. */
async function doing(): Promise<string> {
  const jobs = await d.cluster.kubeconfig.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: 'obs' });
  const running = jobs.items.filter((j) => (j.status?.active ?? 0) > 0).map((j) => j.metadata?.name);
  if (running.length > 0) return `Job ${running.join(', ')}`;
  const deployments = await d.cluster.kubeconfig
    .makeApiClient(AppsV1Api)
    .listNamespacedDeployment({ namespace: 'obs' });
  const rolling = deployments.items.filter((x) => {
    const want = x.spec?.replicas ?? 1;
    return (
      x.status?.updatedReplicas !== want ||
      x.status?.readyReplicas !== want ||
      (x.status?.replicas ?? 0) > want
    );
  });
  if (rolling.length > 0) return `rollout of ${rolling.map((x) => x.metadata?.name).join(', ')}`;
  const o = await d.get(NAME);
  return o.status?.phase === 'AwaitingCutover'
    ? 'the cutover wait'
    : `${o.status?.state ?? '-'} (${o.status?.phase ?? '-'})`;
}

/** The web and worker ReplicaSets (name and revision): a new one means a new Pod template. */
async function replicaSets(): Promise<string[]> {
  const list = await d.cluster.kubeconfig.makeApiClient(AppsV1Api).listNamespacedReplicaSet({
    namespace: 'obs',
    labelSelector: `app.kubernetes.io/instance=${NAME}`,
  });
  return list.items
    .map(
      (r) => `${r.metadata?.name} revision ${r.metadata?.annotations?.['deployment.kubernetes.io/revision']}`,
    )
    .sort();
}

async function oldSdkTraffic(tag: string) {
  const sdk = new Langfuse({ ...project, baseUrl: await d.webUrl() });
  const trace = sdk.trace({ name: `trace-${tag}`, userId: 'u1', sessionId: 's1' });
  trace.span({ name: `span-${tag}` }).end();
  trace.generation({ name: `gen-${tag}`, model: 'gpt' }).end();
  await sdk.shutdownAsync();
  // The worker's producer report covers cutover.producerQuietPeriod (1m): when this traffic
  // leaves that window, the report (and ProducersCompatible) rightly changes.
  setTimeout(() => {
    if (statuses) statuses.world = `${tag} traffic left the producer window`;
  }, 60_000).unref();
}

async function analyticsCount(table: string): Promise<number> {
  const rs = await d.ch.client.query({
    query: `SELECT count() AS n FROM ${table} FINAL`,
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ n: string }>())[0]!.n);
}

async function analyticsIds(query: string): Promise<string[]> {
  const rs = await d.ch.client.query({ query, format: 'JSONEachRow' });
  return (await rs.json<{ id: string }>()).map((r) => r.id).sort();
}

/** The Pod-template annotation of `<name>-<role>` that hashes the Secret keys the role reads. */
function inputsHash(role: string): string {
  const r = d.kubectl(['get', 'deploy', `${NAME}-${role}`, '-n', 'obs', '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).spec.template.metadata.annotations['observatory.dev/inputs-hash'];
}

/** Waits until `<name>-<role>` runs only Pods of a template other than `old`, all ready. */
async function rolledOut(role: string, replicas: number, old: Set<string>) {
  return waitFor(
    `${role} rolled out to new Pods`,
    async () => {
      const pods = await d.pods(role);
      const fresh = pods.filter((p) => !old.has(p.metadata?.labels?.['pod-template-hash'] ?? ''));
      return pods.length === replicas && fresh.length === replicas && fresh.every(isReady)
        ? fresh
        : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 2_000 },
  );
}

/** What the container of `pod` sees in its environment (through the kubelet, as kubectl exec). */
function envInPod(pod: string, variable: string): string {
  const r = d.kubectl(['exec', '-n', 'obs', pod, '--', 'node', '-p', `process.env.${variable}`]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

beforeAll(async () => {
  d = await LocalDeployment.start(localCluster(), 'obs');
  const namespace = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: OPERATOR_NAMESPACE, labels: RESTRICTED_LABELS },
  };
  const support = d.kubectl(
    ['apply', '-f', '-'],
    `${stringify(namespace)}---\n${supportObjects('obs', OPERATOR_NAMESPACE)}`,
  );
  expect(support.code, support.stderr).toBe(0);
  // Labeled for the operator's Secret watch: a rotation of a datastore URL rolls the Pods.
  const label = d.kubectl(['label', 'secret', 'datastores', '-n', 'obs', 'observatory.dev/watch=true']);
  expect(label.code, label.stderr).toBe(0);
  const dir = mkdtempSync(join(tmpdir(), 'observatory-e2e-values-'));
  const values = join(dir, 'values.yaml');
  writeFileSync(values, stringify({ ...OPERATOR_VALUES, replicaCount: OPERATOR_REPLICAS }));
  try {
    await d.installChart(values);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
afterAll(async () => {
  statuses?.stop();
  await fleet?.stop();
  await truth?.stop();
  await d?.stop();
  d?.kubectl(['delete', 'priorityclass', PRIORITY_CLASS, '--ignore-not-found']);
});
beforeEach((ctx) => {
  if (statuses) statuses.step = ctx.task.name;
});

describe('production Pods in restricted namespaces', () => {
  it('the API server refuses a Pod that breaks the restricted Pod Security Standard', async () => {
    const pod = {
      metadata: { name: 'unrestricted' },
      spec: { containers: [{ name: 'c', image: 'observatory:dev' }] },
    };
    const refusal = await d
      .core()
      .createNamespacedPod({ namespace: 'obs', body: pod, dryRun: 'All' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(refusal).toBeInstanceOf(ApiException);
    expect((refusal as ApiException<string>).code).toBe(403);
    expect(JSON.parse((refusal as ApiException<string>).body).message).toMatch(
      /violates PodSecurity "restricted:latest": .*runAsNonRoot/,
    );
  });

  it('the chart installs the operator Pod with every Pod value of values.yaml', async () => {
    const [pod] = await d.operatorPods();
    expect(pod).toBeDefined();
    expectOperatorValuesOn(pod!);
  });
});

describe('admission refuses what the spec forbids', () => {
  const refused = (extra: Record<string, unknown>, message: RegExp) => {
    const r = d.apply({ ...base, metadata: { name: 'refused', namespace: 'obs' }, spec: spec(extra) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  };
  it.each([
    [
      { release: '4', writeMode: 'EventsOnly', nativeOtelBehaviour: 'DualWrite' },
      /EventsOnly.*Direct|nativeOtelBehaviour/,
    ],
    [{ release: '4', writeMode: 'EventsOnly', allowPreviewOptIn: false }, /allowPreviewOptIn/],
    [{ release: '4', writeMode: 'Legacy', backfill: { enabled: true } }, /backfill/],
    [{ release: '4', writeMode: 'Dual', cleanup: { truncateLegacyTables: true } }, /cleanup|EventsOnly/],
    [{ release: '3', writeMode: 'Dual' }, /release/],
  ])('%j', (extra, message) => refused(extra, message));

  it('refuses any way back from EventsOnly, and a rollback to release 3', () => {
    const frozen = {
      ...base,
      metadata: { name: 'frozen', namespace: 'obs' },
      spec: spec({ release: '4', writeMode: 'EventsOnly', paused: true }),
    };
    expect(d.apply(frozen).code).toBe(0);
    const back = d.apply({ ...frozen, spec: spec({ release: '4', writeMode: 'Dual', paused: true }) });
    expect(back.code).not.toBe(0);
    expect(back.stderr).toMatch(/EventsOnly/);
    const rollback = d.apply({ ...frozen, spec: spec({ release: '3', paused: true }) });
    expect(rollback.code).not.toBe(0);
    expect(d.kubectl(['delete', 'obsvc', 'frozen', '-n', 'obs']).code).toBe(0);
  });
});

/**
 * Evicts both web Pods as a drain does while the migration is in Dual: the budget lets the first
 * go, refuses the second (429) until the first one's replacement is ready, then lets it go.
 */
async function drainWebDuringDual() {
  const policy = d.cluster.kubeconfig.makeApiClient(PolicyV1Api);
  await waitFor(
    'the web budget allowing one disruption',
    async () => {
      const b = await policy.readNamespacedPodDisruptionBudget({ name: `${NAME}-web`, namespace: 'obs' });
      return b.status?.currentHealthy === 2 && b.status.disruptionsAllowed === 1 ? b : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 1_000 },
  );
  const names = (await d.pods('web')).map((p) => p.metadata!.name!);
  expect(names).toHaveLength(2);
  statuses!.world = 'web Pods evicted';
  const evictions = await drain(d.core(), 'obs', names);
  expect(evictions[0]!.refusals).toEqual([]);
  expect(evictions[1]!.refusals.length).toBeGreaterThan(0);
  expect(evictions[1]!.refusals[0]).toMatch(/disruption budget/);
  await waitFor(
    'two ready web Pods after the drain',
    async () => {
      const pods = (await d.pods('web')).filter(isReady);
      return pods.length === 2 && pods.every((p) => !names.includes(p.metadata!.name!)) ? pods : undefined;
    },
    { timeoutMs: 240_000, intervalMs: 2_000 },
  );
  expect((await d.get(NAME)).status?.state).toBe('Dual');
}

describe('a release 3 deployment walks to EventsOnly', () => {
  it('starts as release 3', async () => {
    statuses = new StatusRecorder(d.cluster.kubeconfig, 'obs', NAME);
    truth = new ClusterTruth(d.cluster.kubeconfig, 'obs', NAME);
    await truth.start();
    statuses.truth = () => truth!.snapshot();
    await statuses.start();
    fleet = new OperatorFleet(d, doing);
    fleet.start();
    apply({ release: '3' });
    const o = await d.waitFor(
      NAME,
      'Release3 and Ready',
      (x) => x.status?.state === 'Release3' && isTrue(x, 'Ready'),
    );
    expect(o.status?.observedGeneration).toBe(o.metadata.generation);
    // Every template field on the live Pods, admitted by the restricted namespace.
    const web = await waitFor(
      'two ready web Pods',
      async () => {
        const pods = await d.pods('web');
        return pods.length === 2 && pods.every(isReady) ? pods : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
    for (const pod of web) expectTemplateOn(pod, 'web');
    for (const pod of await d.pods('worker')) expectTemplateOn(pod, 'worker');
    const budgets = await d.cluster.kubeconfig
      .makeApiClient(PolicyV1Api)
      .listNamespacedPodDisruptionBudget({ namespace: 'obs' });
    expect(budgets.items.map((b) => [b.metadata?.name, b.spec?.maxUnavailable])).toEqual([
      [`${NAME}-web`, 1],
    ]);
    // A real Pod IP from the node's Pod range, behind the web Service's ClusterIP.
    expect(await d.podIP('web')).toMatch(/^10\.244\./);
    expect(await d.webUrl()).toMatch(/^http:\/\/10\.96\./);
    // A project for the SDK traffic, created with the CLI against the same database.
    const { cli } = await import('../fixtures/service.ts');
    const r = await cli(['create-project', '--name', 'e2e', '--json'], {
      DATABASE_URL: d.pg.url,
      SERVICE_RELEASE: '3',
    });
    expect(r.code, r.stderr).toBe(0);
    project = JSON.parse(r.stdout);
    await oldSdkTraffic('v3');
    expect(await analyticsCount('traces')).toBeGreaterThan(0);
  });

  it('needs the backup confirmation before version 4, then goes to Legacy', async () => {
    apply({ release: '4', writeMode: 'Legacy' });
    await d.waitFor(NAME, 'Stalled on the backup confirmation', (x) => isTrue(x, 'Stalled'));
    expect(condition(await d.get(NAME), 'Stalled')?.message).toMatch(/backupConfirmed/);
    apply({ release: '4', writeMode: 'Legacy', upgrade: { backupConfirmed: true } });
    // From here to EventsOnly an operator Pod (leader or follower) dies every 15-30 s: a killed
    // leader hands over only when its Lease expires (15 s), and denser kills left the cutover
    // wait too few passes to count three stuck probe rounds.
    fleet!.startChaos(15_000, 30_000);
    await crashOperatorSoon();
    const o = await d.waitFor(
      NAME,
      'Legacy and Ready',
      (x) => x.status?.state === 'Legacy' && isTrue(x, 'Ready'),
    );
    expect(isTrue(o, 'PreflightPassed')).toBe(true);
    const web = d.kubectl(['get', 'deploy', `${NAME}-web`, '-n', 'obs', '-o', 'json']);
    const env = JSON.parse(web.stdout).spec.template.spec.containers[0].env as {
      name: string;
      value?: string;
    }[];
    expect(env.find((e) => e.name === 'SERVICE_MIGRATION_V4_WRITE_MODE')?.value).toBe('legacy');
    await oldSdkTraffic('legacy');
  });

  it('goes to Dual and runs the backfill Jobs in order; a failed step stalls and resumes after retry', async () => {
    // Step 4 will fail: its source table is away until the retry.
    await d.ch.client.command({ query: 'RENAME TABLE dataset_run_items_rmt TO dataset_run_items_rmt_away' });
    apply({
      release: '4',
      writeMode: 'Dual',
      backfill: { enabled: true },
      upgrade: { backupConfirmed: true },
    });
    // The operator's own rolling update while the walk moves: the new Pods start before the old
    // ones stop (the chart's surge), so old and new run at once.
    const restart = d.kubectl([
      'rollout',
      'restart',
      'deployment',
      '-n',
      OPERATOR_NAMESPACE,
      '-l',
      'app.kubernetes.io/component=operator',
    ]);
    expect(restart.code, restart.stderr).toBe(0);
    await crashOperatorSoon();
    await d.waitFor(NAME, 'Dual', (x) => x.status?.state === 'Dual');
    await oldSdkTraffic('dual');
    const stalled = await d.waitFor(NAME, 'Stalled on backfill step 4', (x) => isTrue(x, 'Stalled'));
    const message = condition(stalled, 'Stalled')?.message ?? '';
    expect(message).toMatch(/backfill-4|step 4/);
    expect(message).toMatch(/retry-backfill/);
    await drainWebDuringDual();
    expect(d.events(`involvedObject.name=${NAME}`).length).toBeGreaterThan(3);
    await d.ch.client.command({ query: 'RENAME TABLE dataset_run_items_rmt_away TO dataset_run_items_rmt' });
    expect(
      d.kubectl(['annotate', 'obsvc', NAME, '-n', 'obs', '--overwrite', 'observatory.dev/retry-backfill=4'])
        .code,
    ).toBe(0);
    const done = await d.waitFor(NAME, 'BackfillComplete', (x) => isTrue(x, 'BackfillComplete'));
    expect(done.status?.backfill?.progress).toMatch(/4\/4|5\/5/);
    expect(await analyticsCount('events_full')).toBeGreaterThanOrEqual(await analyticsCount('traces'));
    // Rows, not only counts: every trace of every step (release 3 and on) is in the events table.
    const traceIds = await analyticsIds('SELECT DISTINCT id FROM traces FINAL');
    const eventTraceIds = new Set(await analyticsIds('SELECT DISTINCT trace_id AS id FROM events_full'));
    expect(traceIds.length).toBeGreaterThan(0);
    expect(traceIds.filter((id) => !eventTraceIds.has(id))).toEqual([]);
    // The Jobs' Pods (kept after they ran) carry the Jobs' template too.
    const jobPods = (await d.core().listNamespacedPod({ namespace: 'obs', labelSelector: 'job-name' })).items;
    expect(jobPods.length).toBeGreaterThan(0);
    for (const pod of jobPods) expectTemplateOn(pod, 'jobs');
  });

  it('a rotated datastore Secret rolls web and worker to Pods with the new value, still in Dual', async () => {
    const hashes = { web: inputsHash('web'), worker: inputsHash('worker') };
    const oldTemplates = new Set(
      [...(await d.pods('web')), ...(await d.pods('worker'))].map(
        (p) => p.metadata?.labels?.['pod-template-hash'] ?? '',
      ),
    );
    // The same Redis by another spelling: the service keeps working, the Pods must see the new one.
    const rotated = 'redis://redis.obs.svc.cluster.local:6379/0';
    statuses!.world = 'datastores Secret rotated';
    const patch = d.kubectl([
      'patch',
      'secret',
      'datastores',
      '-n',
      'obs',
      '--type',
      'merge',
      '-p',
      JSON.stringify({ stringData: { redis: rotated } }),
    ]);
    expect(patch.code, patch.stderr).toBe(0);
    for (const [role, replicas] of [
      ['web', 2],
      ['worker', 1],
    ] as const) {
      const fresh = await rolledOut(role, replicas, oldTemplates);
      expect(inputsHash(role)).not.toBe(hashes[role]);
      for (const pod of fresh) expect(envInPod(pod.metadata!.name!, 'REDIS_URL')).toBe(rotated);
    }
    const o = await d.get(NAME);
    expect(o.status?.state).toBe('Dual');
    expect(isTrue(o, 'Stalled')).toBe(false);
    await oldSdkTraffic('rotated');
  });

  it('holds the cutover while propagation is stuck, and until approved', async () => {
    const beforeRequest = await replicaSets();
    apply({
      release: '4',
      writeMode: 'EventsOnly',
      nativeOtelBehaviour: 'Direct',
      backfill: { enabled: true },
      upgrade: { backupConfirmed: true },
    });
    const redis = new Redis(d.redis.url);
    try {
      statuses!.world = 'propagation stuck';
      await redis.set('observatory:event-propagation:lease', 'hung-replica', 'PX', 600_000);
      await redis.set('observatory:event-propagation:last-success-at', String(Date.now() - 30 * 60_000));
      const held = await d.waitFor(
        NAME,
        'PropagationHealthy=False',
        (x) => condition(x, 'PropagationHealthy')?.status === 'False',
      );
      expect(condition(held, 'PropagationHealthy')?.message).toMatch(/stuck|unreachable/);
      expect(held.status?.state).toBe('Dual');
      await redis.del('observatory:event-propagation:lease');
      statuses!.world = 'propagation recovered';
    } finally {
      redis.disconnect();
    }
    const waiting = await d.waitFor(
      NAME,
      'healthy again, waiting for approval',
      (x) => isTrue(x, 'PropagationHealthy') && condition(x, 'CutoverApproved')?.status === 'False',
    );
    expect(waiting.status?.state).toBe('Dual');
    // The requested EventsOnly (with Direct OTel) reached no Pod before the approval: web and
    // worker still run the ReplicaSets they ran before the request.
    expect(await replicaSets()).toEqual(beforeRequest);
    const generation = waiting.metadata.generation;
    expect(
      d.kubectl([
        'annotate',
        'obsvc',
        NAME,
        '-n',
        'obs',
        '--overwrite',
        `observatory.dev/approve-cutover=${generation}`,
      ]).code,
    ).toBe(0);
    await crashOperatorSoon(2_000);
    const final = await d.waitFor(
      NAME,
      'EventsOnly and Ready',
      (x) => x.status?.state === 'EventsOnly' && isTrue(x, 'Ready'),
      600_000,
    );
    expect(final.status?.observedGeneration).toBe(final.metadata.generation);
    // The approval rolled web and worker to new ReplicaSets (the judge above can disagree).
    expect(await replicaSets()).not.toEqual(beforeRequest);
    // At least MIN_KILLS kills in all: the rest land on the EventsOnly deployment at rest.
    await waitFor(
      'enough operator kills',
      async () => (fleet!.kills.length >= MIN_KILLS ? true : undefined),
      {
        timeoutMs: 300_000,
        intervalMs: 1_000,
      },
    );
    fleet!.stopChaos();
    await d.waitFor(
      NAME,
      'EventsOnly and Ready after the last kill',
      (x) => x.status?.state === 'EventsOnly' && isTrue(x, 'Ready'),
      180_000,
    );
    // After the commitment the old SDK's batch is refused per event and legacy endpoints are gone.
    const web = await d.webUrl();
    const auth = `Basic ${Buffer.from(`${project.publicKey}:${project.secretKey}`).toString('base64')}`;
    const batch = await fetch(`${web}/api/public/ingestion`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        batch: [{ id: 'e', type: 'trace-create', timestamp: new Date().toISOString(), body: { name: 'x' } }],
      }),
    });
    expect(batch.status).toBe(207);
    expect(((await batch.json()) as { errors: { status: number }[] }).errors[0]?.status).toBe(400);
    expect(
      (
        await fetch(`${web}/api/public/traces`, {
          method: 'POST',
          headers: { authorization: auth },
        })
      ).status,
    ).toBe(404);
    const back = d.apply({
      ...base,
      spec: spec({ release: '4', writeMode: 'Dual', upgrade: { backupConfirmed: true } }),
    });
    expect(back.code).not.toBe(0);
  });

  it('kstatus and the Argo CD health check agree with the conditions at every status of the walk', async () => {
    const records = statuses!.records;
    const wrong = await statuses!.healthDisagreements(join(chartDir, 'docs', 'argocd-health.lua'));
    expect(wrong, JSON.stringify(wrong, null, 1)).toEqual([]);
    const verdicts = new Set(
      records.map(
        (r) => expectedHealth({ metadata: { generation: r.generation }, status: r.status }).kstatus,
      ),
    );
    expect([...verdicts].sort()).toEqual(['Current', 'Failed', 'InProgress']);
  });

  it('only the leader reconciled, and every status matched the cluster at that moment', () => {
    const f = fleet!;
    const summary = {
      kills: f.kills.map((k) => `${k.wasLeader ? 'leader' : 'follower'} ${k.pod} during ${k.during}`),
      followers: f.followers().length,
      followerScrapes: f.scrapes.filter((s) => s.leader === 0).length,
      maxFollowerReconciles: Math.max(0, ...f.scrapes.filter((s) => s.leader === 0).map((s) => s.reconciles)),
      leaderReconciles: Math.max(0, ...f.scrapes.filter((s) => s.leader === 1).map((s) => s.reconciles)),
      overlaps: f.overlaps.length,
      statusesChecked: statuses!.records.filter((r) => r.truth).length,
    };
    // For the review of a chaos walk: the kills and the condition history they left.
    console.log(`operator fleet: ${JSON.stringify(summary, null, 1)}`);
    console.log(`condition history:\n${narrative(statuses!.records).join('\n')}`);
    expect(f.followerReconciles(), JSON.stringify(summary)).toEqual([]);
    expect(summary.followers).toBeGreaterThan(1);
    expect(f.kills.length).toBeGreaterThanOrEqual(MIN_KILLS);
    expect(summary.overlaps, 'old and new operator Pods ran at once').toBeGreaterThan(0);
    expect(summary.statusesChecked).toBeGreaterThan(10);
    const wrong = untruths(statuses!.records);
    expect(wrong, narrative(statuses!.records).join('\n')).toEqual([]);
  });

  it('told a story without condition flicker on every watch event of the walk', () => {
    const records = statuses!.records;
    const story = narrative(records).join('\n');
    // For review: STATUS_NARRATIVE=<file> keeps the walk's condition transitions.
    const out = process.env['STATUS_NARRATIVE'];
    if (out) writeFileSync(out, `${story}\n`);
    expect(records.length, story).toBeGreaterThan(10);
    expect(findFlicker(records), story).toEqual([]);
  });
});
