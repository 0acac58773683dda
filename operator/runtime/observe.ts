/**
 * Builds the planner's World for one ObservabilityService from the informer caches and, only when
 * the planner needs them (`observationsNeeded`), from HTTP reads of the worker pods.
 */
import { createHash } from 'node:crypto';
import type {
  KubernetesObject,
  V1ConfigMap,
  V1Deployment,
  V1Job,
  V1Pod,
  V1Secret,
} from '@kubernetes/client-node';
import type {
  BackfillReport,
  IngestionBacklog,
  JobResultsReport,
  ProducersReport,
} from '../../server/contract/worker-api.ts';
import {
  CONFIG_HASH_ANNOTATION,
  type ObservabilityService,
  type ObservedDeployment,
  type ObservedJob,
  observationsNeeded,
  PURPOSE_ANNOTATION,
  type Role,
  SPEC_HASH_ANNOTATION,
  type World,
} from '../index.ts';
import type { ProbeResult } from '../planner/types.ts';
import type { SourceDigests } from '../render/sources.ts';
import type { CachedKinds } from './kinds.ts';

/**
 * One cache a cached kind (`deployments`, `pods`, …): `secrets` and `configMaps` hold those labeled
 * for watching (empty when Secret rollouts are off).
 */
/** One list per kind, by its plural (networkPolicy: networkPolicies). */
export type Caches = {
  [K in keyof CachedKinds as K extends `${infer S}y` ? `${S}ies` : `${K}s`]: () => readonly CachedKinds[K][];
};

/** The label users put on Secrets and ConfigMaps whose changes should roll the Pods that read them. */
export const WATCH_LABEL = 'observatory.dev/watch';

const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');

/**
 * Per-key digests of the watched Secrets and ConfigMaps of one namespace: the planner hashes what
 * each role reads from these, and never sees a value.
 */
export function sourceDigests(
  namespace: string,
  secrets: readonly V1Secret[],
  configMaps: readonly V1ConfigMap[],
): SourceDigests {
  const digest = (objects: readonly (V1Secret | V1ConfigMap)[]) =>
    Object.fromEntries(
      objects
        .filter((o) => o.metadata?.namespace === namespace && o.metadata.name)
        .map((o) => {
          const data: Record<string, string> = { ...(o.data ?? {}) };
          for (const [k, v] of Object.entries((o as V1ConfigMap).binaryData ?? {})) data[k] = v;
          return [
            o.metadata!.name!,
            Object.fromEntries(Object.entries(data).map(([k, v]) => [k, sha256(v)])),
          ];
        }),
    );
  return { secrets: digest(secrets), configMaps: digest(configMaps) };
}

export const INSTANCE = 'app.kubernetes.io/instance';
export const COMPONENT = 'app.kubernetes.io/component';

const ownedBy = (owner: ObservabilityService) => (o: KubernetesObject) =>
  o.metadata?.namespace === owner.metadata?.namespace &&
  o.metadata?.labels?.[INSTANCE] === owner.metadata?.name;

/** A Pod that may still serve: not finished (an evicted or completed Pod keeps its object). */
const live = (p: V1Pod) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';

/** What the planner reads of a Deployment, with the role's Pods that still run an older template. */
export function observedDeployment(d: V1Deployment, rolePods: readonly V1Pod[] = []): ObservedDeployment {
  const configHash = d.spec?.template?.metadata?.annotations?.[CONFIG_HASH_ANNOTATION] ?? '';
  return {
    generation: d.metadata?.generation ?? 0,
    observedGeneration: d.status?.observedGeneration ?? 0,
    specReplicas: d.spec?.replicas ?? 1,
    replicas: d.status?.replicas ?? 0,
    updatedReplicas: d.status?.updatedReplicas ?? 0,
    readyReplicas: d.status?.readyReplicas ?? 0,
    availableReplicas: d.status?.availableReplicas ?? 0,
    configHash,
    specHash: d.metadata?.annotations?.[SPEC_HASH_ANNOTATION] ?? '',
    stalePods: rolePods.filter(
      (p) => live(p) && p.metadata?.annotations?.[CONFIG_HASH_ANNOTATION] !== configHash,
    ).length,
    livePods: rolePods.filter(live).length,
  };
}

/** The termination message of the Job's container that exited 0, if any (a backup's summary). */
function terminationMessage(job: string, pods: readonly V1Pod[]): string | undefined {
  for (const p of pods) {
    const l = p.metadata?.labels;
    if (l?.['batch.kubernetes.io/job-name'] !== job && l?.['job-name'] !== job) continue;
    for (const c of p.status?.containerStatuses ?? [])
      if (c.state?.terminated?.exitCode === 0 && c.state.terminated.message)
        return c.state.terminated.message;
  }
  return undefined;
}

/** What the planner reads of a Job (with its Pods, for the termination message). */
export function observedJob(j: V1Job, pods: readonly V1Pod[] = []): ObservedJob {
  const message = terminationMessage(j.metadata?.name ?? '', pods);
  const terminal = j.status?.conditions?.find(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
  return {
    name: j.metadata?.name ?? '',
    purpose: j.metadata?.annotations?.[PURPOSE_ANNOTATION] ?? '',
    outcome: terminal?.type === 'Complete' ? 'succeeded' : terminal?.type === 'Failed' ? 'failed' : 'running',
    ...(terminal?.reason ? { reason: terminal.reason } : {}),
    ...(terminal?.message ? { message: terminal.message } : {}),
    ...(message ? { terminationMessage: message } : {}),
  };
}

/**
 * HTTP reads of one worker Pod: the operator goes to the Pod's own address, `kubectl observatory
 * plan` through the API server's Pod proxy. Undefined (or `unreachable`) when there is no answer.
 */
export interface WorkerReads {
  probe(pod: V1Pod, path: string): Promise<ProbeResult>;
  producers(pod: V1Pod, since: string): Promise<ProducersReport | undefined>;
  backfill(pod: V1Pod): Promise<BackfillReport | undefined>;
  ingestionBacklog(pod: V1Pod): Promise<IngestionBacklog | undefined>;
  jobResults(pod: V1Pod): Promise<JobResultsReport | undefined>;
}

export const isReady = (p: V1Pod): boolean =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export async function observeWorld(
  object: ObservabilityService,
  caches: Caches,
  reads: WorkerReads,
): Promise<World> {
  const mine = ownedBy(object);
  const roleOf = (o: KubernetesObject) => o.metadata?.labels?.[COMPONENT] as Role | undefined;
  const pods = caches.pods().filter(mine);
  const deployments: World['deployments'] = {};
  for (const d of caches.deployments().filter(mine)) {
    const role = roleOf(d);
    if (role === 'web' || role === 'worker')
      deployments[role] = observedDeployment(
        d,
        pods.filter((p) => roleOf(p) === role),
      );
  }
  const services: World['services'] = {};
  for (const s of caches.services().filter(mine)) {
    const role = roleOf(s);
    if (role === 'web' || role === 'worker')
      services[role] = { specHash: s.metadata?.annotations?.[SPEC_HASH_ANNOTATION] ?? '' };
  }
  const disruptionBudgets: World['disruptionBudgets'] = {};
  for (const b of caches.disruptionBudgets().filter(mine)) {
    const role = roleOf(b);
    if (role === 'web' || role === 'worker')
      disruptionBudgets[role] = { specHash: b.metadata?.annotations?.[SPEC_HASH_ANNOTATION] ?? '' };
  }
  const networkPolicies: World['networkPolicies'] = {};
  for (const n of caches.networkPolicies().filter(mine)) {
    const role = roleOf(n);
    if (role === 'web' || role === 'worker')
      networkPolicies[role] = { specHash: n.metadata?.annotations?.[SPEC_HASH_ANNOTATION] ?? '' };
  }
  const workers = pods.filter((p) => roleOf(p) === 'worker' && !p.metadata?.deletionTimestamp && live(p));
  // A pod the kubelet does not call Ready is starting (its server may not listen yet) or failing its
  // dependencies: it is not asked, so it cannot answer for the others; fewer answers than replicas
  // still leave the probe unanswered (see planner/propagation.ts).
  const ready = workers.filter((p) => isReady(p) && p.status?.podIP);
  const need = observationsNeeded(object);
  const world: World = {
    deployments,
    services,
    disruptionBudgets,
    networkPolicies,
    sources: sourceDigests(object.metadata.namespace, caches.secrets(), caches.configMaps()),
    jobs: caches
      .jobs()
      .filter(mine)
      .map((j) => observedJob(j, pods)),
    producers: { known: false },
    backfill: { known: false },
    now: new Date(),
  };
  if (need.workerProbePath) {
    const path = need.workerProbePath;
    world.workerProbes = await Promise.all(
      ready.map(async (p) => ({ pod: p.metadata?.name ?? '', result: await reads.probe(p, path) })),
    );
  }
  // Reports come from any worker: they read shared state (PostgreSQL), not the pod's own.
  if (need.producersSince && ready[0]) {
    const report = await reads.producers(ready[0], need.producersSince);
    if (report)
      world.producers = {
        known: true,
        producers: report.producers,
        legacyEvaluators: report.legacyEvaluators.map(({ projectId, name }) => ({ projectId, name })),
      };
  }
  if (need.backfill && ready[0]) {
    const report = await reads.backfill(ready[0]);
    if (report) {
      world.backfill = {
        known: true,
        steps: report.steps.map((s) => ({
          step: s.step,
          status: s.status,
          chunksDone: s.chunksDone,
          chunksTotal: s.chunksTotal,
        })),
        ...(report.store?.pressure ? { pressure: report.store.pressure } : {}),
      };
    }
  }
  if (need.ingestionBacklog) {
    const backlog = ready[0] ? await reads.ingestionBacklog(ready[0]) : undefined;
    world.ingestionBacklog = backlog ? { known: true, ...backlog } : { known: false };
  }
  if (need.jobResults) {
    const report = ready[0] ? await reads.jobResults(ready[0]) : undefined;
    world.jobResults = report
      ? { known: true, results: report.results.map(({ job, result, detail }) => ({ job, result, detail })) }
      : { known: false };
  }
  return world;
}
