/**
 * The ingress NetworkPolicies of the web and worker (`<name>-web`, `<name>-worker`), only when
 * spec.networkPolicy.enabled: a policy that does not fit a cluster (its ingress controller, its
 * monitoring) cuts traffic, so it is opt-in. The web is the public ingestion endpoint: its HTTP and
 * OTLP/gRPC ports are open to spec.networkPolicy.ingressFrom, anywhere when unset. The worker's port
 * serves only the operator (probes, reports) and the instance's own Pods. Egress is left alone: the
 * datastores are outside the cluster's selectors.
 */
import type { V1NetworkPolicy, V1NetworkPolicyPeer, V1NetworkPolicyPort } from '@kubernetes/client-node';
import { OTLP_GRPC_PORT, PORTS } from '../../server/contract/ports.ts';
import { shortHash } from '../util/hash.ts';
import {
  labels,
  networkPolicyName,
  ownerReference,
  type Role,
  SPEC_HASH_ANNOTATION,
  selector,
} from './names.ts';
import type { RenderContext } from './workloads.ts';

/**
 * The operator's Pods, as the chart labels them (`part-of` is fixed, unlike the chart's name and
 * release). In any namespace: the object does not say where its operator runs.
 */
export const OPERATOR_PEER: V1NetworkPolicyPeer = {
  namespaceSelector: {},
  podSelector: {
    matchLabels: { 'app.kubernetes.io/part-of': 'observatory', 'app.kubernetes.io/component': 'operator' },
  },
};

const tcp = (port: number): V1NetworkPolicyPort => ({ protocol: 'TCP', port });

function ingressRule(ctx: RenderContext, role: Role) {
  if (role === 'web') {
    const from = ctx.spec.networkPolicy?.ingressFrom ?? [];
    // No `from` at all admits every source; an empty list would admit none.
    return { ...(from.length > 0 ? { from } : {}), ports: [tcp(PORTS.web), tcp(OTLP_GRPC_PORT)] };
  }
  const instance = selector(ctx.meta.name, role);
  const ownPods: V1NetworkPolicyPeer = {
    podSelector: {
      matchLabels: {
        'app.kubernetes.io/name': instance['app.kubernetes.io/name']!,
        'app.kubernetes.io/instance': instance['app.kubernetes.io/instance']!,
      },
    },
  };
  return { from: [OPERATOR_PEER, ownPods], ports: [tcp(PORTS.worker)] };
}

/** The policy the role should have, or undefined when it should have none. */
export function renderNetworkPolicy(ctx: RenderContext, role: Role): V1NetworkPolicy | undefined {
  const { meta, spec } = ctx;
  if (!spec.networkPolicy?.enabled) return undefined;
  const policySpec = {
    podSelector: { matchLabels: selector(meta.name, role) },
    policyTypes: ['Ingress'],
    ingress: [ingressRule(ctx, role)],
  };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: networkPolicyName(meta.name, role),
      namespace: meta.namespace,
      labels: labels(meta.name, role),
      annotations: { [SPEC_HASH_ANNOTATION]: shortHash(policySpec) },
      ownerReferences: [ownerReference(meta)],
    },
    spec: policySpec,
  };
}
