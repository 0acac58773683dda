/** Names, labels and owner references of the children (ARCHITECTURE §4). */
import type { V1OwnerReference } from '@kubernetes/client-node';
import type { Role } from '../../server/contract/ports.ts';
import { API_VERSION, KIND, type ObjectMeta } from '../api/v1alpha1.ts';

export type { Role };
/** The containers that read the spec's Secrets and ConfigMaps: each role's, and the Jobs'. */
export type SourceReader = Role | 'jobs';
export const MANAGED_BY = 'observatory-operator';
/** Pod template annotation whose change rolls the pods. */
export const CONFIG_HASH_ANNOTATION = 'observatory.dev/config-hash';
/** Pod template annotation: hash of the Secret and ConfigMap keys the role reads (see sources.ts). */
export const INPUTS_HASH_ANNOTATION = 'observatory.dev/inputs-hash';
/** Object annotation hashing the whole desired spec: the planner re-applies when it differs. */
export const SPEC_HASH_ANNOTATION = 'observatory.dev/spec-hash';
/** Job annotations the planner reads back to know what a Job stands for. */
export const PURPOSE_ANNOTATION = 'observatory.dev/purpose';
export const ATTEMPT_ANNOTATION = 'observatory.dev/attempt';

export const deploymentName = (owner: string, role: Role): string => `${owner}-${role}`;
/** @alias A role's Service shares its Deployment's name. */
export const serviceName = deploymentName;
/** @alias A role's PodDisruptionBudget shares its Deployment's name. */
export const disruptionBudgetName = deploymentName;
/** @alias A role's NetworkPolicy shares its Deployment's name. */
export const networkPolicyName = deploymentName;
/** Job names stay within 63 characters (the job-name pod label); the hash keeps them unique. */
export function jobName(owner: string, purpose: string, hash: string): string {
  const room = 63 - purpose.length - hash.length - 2;
  return `${owner.slice(0, room).replace(/-+$/, '')}-${purpose}-${hash}`;
}

export function labels(owner: string, component: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'observatory',
    'app.kubernetes.io/instance': owner,
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/managed-by': MANAGED_BY,
  };
}

/** Selector labels: stable across renders (a Deployment's selector is immutable). */
export function selector(owner: string, role: Role): Record<string, string> {
  const l = labels(owner, role);
  return {
    'app.kubernetes.io/name': l['app.kubernetes.io/name']!,
    'app.kubernetes.io/instance': l['app.kubernetes.io/instance']!,
    'app.kubernetes.io/component': l['app.kubernetes.io/component']!,
  };
}

export function ownerReference(meta: ObjectMeta): V1OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: meta.name,
    uid: meta.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}
