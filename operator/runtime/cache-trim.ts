/**
 * What the informer caches keep of each kind, applied to every listed and watched object before it
 * is stored (as controller-runtime's cache transforms do): the cache's size then grows with what the
 * operator reads, not with what the API server sends. Every kind loses `metadata.managedFields`
 * (server-side apply bookkeeping, often the largest part of a small object; the status PUT of an
 * ObservabilityService without it keeps the stored entries, as the API server copies them from the
 * live object). The kinds the operator creates lose what observe.ts and enqueue.ts never read:
 *   - Deployment: the Pod spec of its template (read: replicas, the template's annotations, status);
 *   - Job, Service, PodDisruptionBudget, NetworkPolicy: the spec (read: metadata and a Job's status conditions);
 *   - Pod: the spec and every status field but phase, conditions, podIP and the termination
 *     message of a container that exited 0 (a backup Job's summary).
 * The ObservabilityService, Secrets and ConfigMaps keep everything else: the planner reads the
 * object whole, and a source's data is what its digest covers.
 */
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import type { Watched } from './kinds.ts';

export type Trim<T> = (obj: T) => T;

export function withoutManagedFields<T extends KubernetesObject>(obj: T): T {
  if (!obj.metadata?.managedFields) return obj;
  const { managedFields: _, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

function withoutSpec<T extends KubernetesObject & { spec?: unknown }>(obj: T): T {
  const { spec: _, ...rest } = withoutManagedFields(obj);
  return rest as T;
}

export const cacheTrims: { [K in keyof Watched]: Trim<Watched[K]> } = {
  object: withoutManagedFields,
  deployment: (d) => {
    const trimmed = withoutManagedFields(d);
    if (!trimmed.spec) return trimmed;
    const { spec: _, ...template } = trimmed.spec.template;
    return { ...trimmed, spec: { ...trimmed.spec, template } };
  },
  job: withoutSpec,
  service: withoutSpec,
  disruptionBudget: withoutSpec,
  networkPolicy: withoutSpec,
  pod: (p) => {
    const { spec: _, status, ...rest } = withoutManagedFields(p);
    if (!status) return rest;
    const kept: NonNullable<V1Pod['status']> = {};
    if (status.phase !== undefined) kept.phase = status.phase;
    if (status.conditions !== undefined) kept.conditions = status.conditions;
    if (status.podIP !== undefined) kept.podIP = status.podIP;
    const finished = (status.containerStatuses ?? []).filter(
      (c) => c.state?.terminated?.exitCode === 0 && c.state.terminated.message,
    );
    if (finished.length > 0)
      kept.containerStatuses = finished.map((c) => ({
        name: c.name,
        image: c.image,
        imageID: c.imageID,
        ready: c.ready,
        restartCount: c.restartCount,
        state: { terminated: { exitCode: 0, message: c.state!.terminated!.message! } },
      }));
    return { ...rest, status: kept };
  },
  secret: withoutManagedFields,
  configMap: withoutManagedFields,
};
