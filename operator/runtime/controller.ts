/**
 * The reconciler: for one ObservabilityService, observe the world, ask the pure planner what to
 * do, and carry the actions out in order (independent workload writes together, batches.ts),
 * stopping at the first failure (the work queue retries with backoff). Status goes through the
 * status subresource under optimistic concurrency.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { type Action, API_VERSION, KIND, type ObservabilityService, plan } from '../index.ts';
import { batches } from './batches.ts';
import { type Blocked, NOT_LEADING_RETRY_MS, UNSYNCED_RETRY_MS } from './gate.ts';
import type { Kube } from './kube.ts';
import { statusCode } from './kube.ts';
import { type Caches, observeWorld, type WorkerReads } from './observe.ts';
import type { OperatorMetrics } from './serve.ts';
import { serviceSeries } from './service-series.ts';
import type { Outcome } from './workqueue.ts';

export interface ControllerDeps {
  kube: Kube;
  objects: (namespace: string, name: string) => ObservabilityService | undefined;
  caches: Caches;
  reads: WorkerReads;
  metrics?: OperatorMetrics;
  /**
   * The object as the operator's own status write will store it, then as stored: its echo is no
   * news (told before the write too, since the echo may arrive before the answer).
   */
  expect?: (object: ObservabilityService) => void;
  log: (msg: string, fields?: Record<string, unknown>) => void;
  /**
   * Whether a pass may run or write now (gate.ts): asked before the pass, after it observed the
   * world, and before each write. Absent: always (tests that drive the reconciler directly).
   */
  blocked?: () => Blocked | undefined;
}

/** A status write lost a race: re-read and re-plan at once rather than back off. */
export class Conflict extends Error {
  override name = 'Conflict';
}

/**
 * A pass that may not go on looks again shortly: the caches may sync, a renewal that came late
 * may restore the leadership. A follower never gets here with a key (its queue is closed), and
 * a process that lost the Lease stops its queue, which then takes no key back.
 */
function heldBack(deps: ControllerDeps): Outcome | undefined {
  const blocked = deps.blocked?.();
  if (!blocked) return undefined;
  return { requeueAfterMs: blocked.kind === 'notLeader' ? NOT_LEADING_RETRY_MS : UNSYNCED_RETRY_MS };
}

export async function reconcile(key: string, deps: ControllerDeps): Promise<Outcome | undefined> {
  const before = heldBack(deps);
  if (before) return before;
  const [namespace, name] = key.split('/') as [string, string];
  const object = deps.objects(namespace, name);
  if (!object || (object as KubernetesObject).metadata?.deletionTimestamp) {
    deps.metrics?.objects.forget(namespace, name);
    return undefined; // children go by ownerReference GC
  }
  const started = performance.now();
  let result = 'ok';
  try {
    const world = await observeWorld(object, deps.caches, deps.reads);
    const observed = heldBack(deps);
    if (observed) {
      result = 'held';
      return observed;
    }
    const p = plan({ object, world });
    for (const probe of world.workerProbes ?? []) {
      if (probe.result !== 'healthy')
        deps.metrics?.probeFailures.inc({ namespace, name, result: probe.result });
    }
    let requeueAfterMs: number | undefined;
    for (const batch of batches(p.actions)) {
      const now = heldBack(deps);
      if (now) {
        result = 'held';
        return now;
      }
      const settled = await Promise.allSettled(batch.map((action) => execute(action, object, deps)));
      for (const r of settled) {
        if (r.status === 'rejected') throw r.reason;
        if (r.value !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? r.value, r.value);
      }
    }
    deps.metrics?.objects.record(namespace, name, serviceSeries(p.status, world.backfill));
    return requeueAfterMs === undefined ? undefined : { requeueAfterMs };
  } catch (err) {
    result = err instanceof Conflict ? 'conflict' : 'error';
    if (err instanceof Conflict) return { requeueAfterMs: 100 };
    deps.metrics?.reconcileErrors.inc({ namespace, name });
    throw err;
  } finally {
    deps.metrics?.reconcileDuration.observe({ result }, (performance.now() - started) / 1000);
  }
}

async function execute(
  action: Action,
  object: ObservabilityService,
  deps: ControllerDeps,
): Promise<number | undefined> {
  const { kube } = deps;
  /** A child of the object by its name (the object's namespace is the child's). */
  const child = (apiVersion: string, kind: string, name: string) => ({
    apiVersion,
    kind,
    metadata: { name, namespace: object.metadata!.namespace! },
  });
  switch (action.kind) {
    case 'applyDeployment':
    case 'applyService':
    case 'applyDisruptionBudget':
    case 'applyNetworkPolicy':
    case 'createJob':
    case 'applyConfigMap':
      await kube.apply(action.object as KubernetesObject);
      return undefined;
    case 'deleteJob':
      await kube.delete(child('batch/v1', 'Job', action.name));
      deps.log('deleted job', { job: action.name, reason: action.reason });
      return undefined;
    case 'deleteDisruptionBudget':
      await kube.delete(child('policy/v1', 'PodDisruptionBudget', action.name));
      return undefined;
    case 'deleteNetworkPolicy':
      await kube.delete(child('networking.k8s.io/v1', 'NetworkPolicy', action.name));
      return undefined;
    case 'deleteConfigMap':
      await kube.delete(child('v1', 'ConfigMap', action.name));
      return undefined;
    case 'writeStatus':
      try {
        const written: ObservabilityService = {
          ...object,
          apiVersion: API_VERSION,
          kind: KIND,
          status: action.status,
        };
        deps.expect?.(written);
        // Not inside `expect?.()`: without an `expect` its argument would never be evaluated.
        const stored = await kube.replaceStatus(written);
        deps.expect?.(stored);
      } catch (err) {
        if (statusCode(err) === 409) throw new Conflict('status changed since it was read');
        throw err;
      }
      return undefined;
    case 'event':
      await kube
        .event({ ...object, apiVersion: API_VERSION, kind: KIND }, action.type, action.reason, action.message)
        .catch((err: Error) => deps.log('event not recorded', { error: err.message }));
      return undefined;
    case 'requeue':
      return action.afterSeconds * 1000;
  }
}
