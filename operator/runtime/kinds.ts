/**
 * The kinds the operator's informers cache, by the name each goes by in the cache trims
 * (cache-trim.ts), the change filters' fingerprints (enqueue.ts) and the caches the planner's World
 * is built from (observe.ts): a kind added here is one each of them must handle.
 */
import type {
  V1ConfigMap,
  V1Deployment,
  V1Job,
  V1NetworkPolicy,
  V1Pod,
  V1PodDisruptionBudget,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import type { ObservabilityService } from '../index.ts';

/** The children the operator creates, and the Secrets and ConfigMaps users label for watching. */
export interface CachedKinds {
  deployment: V1Deployment;
  service: V1Service;
  job: V1Job;
  pod: V1Pod;
  disruptionBudget: V1PodDisruptionBudget;
  networkPolicy: V1NetworkPolicy;
  secret: V1Secret;
  configMap: V1ConfigMap;
}

/** Every cached kind, the ObservabilityService (`object`) with them. */
export interface Watched extends CachedKinds {
  object: ObservabilityService;
}

/** A watched Secret or ConfigMap: its data is all the operator reads of it. */
export type Source = CachedKinds['secret'] | CachedKinds['configMap'];
