/**
 * The PodDisruptionBudgets of the web and worker (`<name>-web`, `<name>-worker`): on by default
 * when a role runs more than one replica, so a node drain evicts its Pods one at a time instead
 * of all at once mid-migration; off by default for one replica, where any budget would either
 * block every drain or protect nothing.
 */
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { shortHash } from '../util/hash.ts';
import {
  disruptionBudgetName,
  labels,
  ownerReference,
  type Role,
  SPEC_HASH_ANNOTATION,
  selector,
} from './names.ts';
import type { RenderContext } from './workloads.ts';

/** The budget the role should have, or undefined when it should have none. */
export function renderDisruptionBudget(ctx: RenderContext, role: Role): V1PodDisruptionBudget | undefined {
  const { meta, spec } = ctx;
  const settings = spec[role];
  const budget = settings.podDisruptionBudget ?? {};
  if (!(budget.enabled ?? settings.replicas > 1)) return undefined;
  const limit =
    budget.minAvailable !== undefined
      ? { minAvailable: budget.minAvailable }
      : { maxUnavailable: budget.maxUnavailable ?? 1 };
  const pdbSpec = { selector: { matchLabels: selector(meta.name, role) }, ...limit };
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name: disruptionBudgetName(meta.name, role),
      namespace: meta.namespace,
      labels: labels(meta.name, role),
      annotations: { [SPEC_HASH_ANNOTATION]: shortHash(pdbSpec) },
      ownerReferences: [ownerReference(meta)],
    },
    spec: pdbSpec,
  };
}
