/**
 * The ingress NetworkPolicies (spec.networkPolicy): what each role's policy admits, and the
 * planner keeping them as rendered and deleting them once the spec turns them off.
 */
import type { V1NetworkPolicyPeer } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../operator/api/effective.ts';
import type { ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { plan } from '../../operator/planner/plan.ts';
import type { Action, World } from '../../operator/planner/types.ts';
import { OPERATOR_PEER, renderNetworkPolicy } from '../../operator/render/network-policy.ts';
import { renderDeployment, specHashOf } from '../../operator/render/workloads.ts';
import { OTLP_GRPC_PORT, PORTS } from '../../server/contract/ports.ts';
import { dualSpec, objectsOn, quietWorld, settledStatus } from '../fixtures/operator/planner-world.ts';
import { rolledOut } from '../fixtures/operator/rolled-out.ts';

const base = dualSpec({ upgrade: { backupConfirmed: true } });
const meta = { name: 'obs', namespace: 'ns', uid: 'uid-1', generation: 5 };
const ctxOf = (extra: Partial<ObservabilityServiceSpec>) => ({
  meta,
  spec: withDefaults({ ...base, ...extra }),
});

const gateway: V1NetworkPolicyPeer = {
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress' } },
};
const office: V1NetworkPolicyPeer = { ipBlock: { cidr: '10.20.0.0/16' } };
const instance = { 'app.kubernetes.io/name': 'observatory', 'app.kubernetes.io/instance': 'obs' };
const web = [
  { protocol: 'TCP', port: PORTS.web },
  { protocol: 'TCP', port: OTLP_GRPC_PORT },
];
const worker = [{ protocol: 'TCP', port: PORTS.worker }];

describe('renderNetworkPolicy', () => {
  it.each([
    { case: 'unset', role: 'web', spec: {}, want: undefined },
    { case: 'disabled', role: 'worker', spec: { networkPolicy: { enabled: false } }, want: undefined },
    {
      case: 'disabled, peers given',
      role: 'web',
      spec: { networkPolicy: { enabled: false, ingressFrom: [office] } },
      want: undefined,
    },
    {
      case: 'web, no peers: from anywhere',
      role: 'web',
      spec: { networkPolicy: { enabled: true } },
      want: { ports: web },
    },
    {
      case: 'web, empty peers: still from anywhere',
      role: 'web',
      spec: { networkPolicy: { enabled: true, ingressFrom: [] } },
      want: { ports: web },
    },
    {
      case: 'web, peers: from those only',
      role: 'web',
      spec: { networkPolicy: { enabled: true, ingressFrom: [gateway, office] } },
      want: { from: [gateway, office], ports: web },
    },
    {
      case: 'worker: the operator and the instance, whatever the web peers',
      role: 'worker',
      spec: { networkPolicy: { enabled: true, ingressFrom: [office] } },
      want: { from: [OPERATOR_PEER, { podSelector: { matchLabels: instance } }], ports: worker },
    },
  ] as const)('$case', ({ role, spec, want }) => {
    const policy = renderNetworkPolicy(ctxOf(spec as Partial<ObservabilityServiceSpec>), role);
    if (want === undefined) return expect(policy).toBeUndefined();
    expect(policy!.metadata).toMatchObject({
      name: `obs-${role}`,
      namespace: 'ns',
      labels: { ...instance, 'app.kubernetes.io/component': role },
      ownerReferences: [{ kind: 'ObservabilityService', name: 'obs', uid: 'uid-1', controller: true }],
    });
    expect(specHashOf(policy!)).toMatch(/^[0-9a-f]+$/);
    expect(policy!.spec).toEqual({
      podSelector: { matchLabels: renderDeployment(ctxOf({}), role, 'Dual').spec!.selector.matchLabels },
      policyTypes: ['Ingress'],
      ingress: [want],
    });
  });

  it('selects the operator by the labels the chart gives its Pods, in any namespace', () => {
    expect(OPERATOR_PEER).toEqual({
      namespaceSelector: {},
      podSelector: {
        matchLabels: {
          'app.kubernetes.io/part-of': 'observatory',
          'app.kubernetes.io/component': 'operator',
        },
      },
    });
  });

  it('a change of the peers changes the spec hash (the planner re-applies)', () => {
    const hash = (ingressFrom: V1NetworkPolicyPeer[]) =>
      specHashOf(renderNetworkPolicy(ctxOf({ networkPolicy: { enabled: true, ingressFrom } }), 'web')!);
    expect(hash([office])).not.toBe(hash([gateway]));
    expect(hash([office])).toBe(hash([office]));
  });
});

describe('planner: NetworkPolicies', () => {
  const object = (extra: Partial<ObservabilityServiceSpec>) => objectsOn(base)(extra, settledStatus('Dual'));
  const observed = (extra: Partial<ObservabilityServiceSpec>): World['networkPolicies'] => {
    const ctx = ctxOf(extra);
    return {
      web: { specHash: specHashOf(renderNetworkPolicy(ctx, 'web')!) },
      worker: { specHash: specHashOf(renderNetworkPolicy(ctx, 'worker')!) },
    };
  };
  const actionsFor = (
    extra: Partial<ObservabilityServiceSpec>,
    networkPolicies?: World['networkPolicies'],
  ) => {
    const o = object(extra);
    const p = plan({
      object: o,
      world: quietWorld(new Date('2026-03-01T12:00:00Z'), {
        deployments: rolledOut(o, 'Dual'),
        ...(networkPolicies ? { networkPolicies } : {}),
      }),
    });
    return p.actions.flatMap((a: Action) =>
      a.kind === 'applyNetworkPolicy'
        ? [`apply ${a.role} ${a.object.metadata!.name}`]
        : a.kind === 'deleteNetworkPolicy'
          ? [`delete ${a.role} ${a.name}`]
          : [],
    );
  };
  const on = { networkPolicy: { enabled: true } };

  it.each([
    { case: 'off, none there', spec: {}, there: undefined, want: [] },
    {
      case: 'on, none there: both applied',
      spec: on,
      there: undefined,
      want: ['apply web obs-web', 'apply worker obs-worker'],
    },
    { case: 'on, both as rendered: nothing', spec: on, there: observed(on), want: [] },
    {
      case: 'on, the web peers changed: the web re-applied',
      spec: { networkPolicy: { enabled: true, ingressFrom: [office] } },
      there: observed(on),
      want: ['apply web obs-web'],
    },
    {
      case: 'turned off: both deleted',
      spec: { networkPolicy: { enabled: false } },
      there: observed(on),
      want: ['delete web obs-web', 'delete worker obs-worker'],
    },
    {
      case: 'field removed: both deleted',
      spec: {},
      there: observed(on),
      want: ['delete web obs-web', 'delete worker obs-worker'],
    },
    {
      case: 'off, one left over: deleted',
      spec: {},
      there: { worker: { specHash: 'x' } },
      want: ['delete worker obs-worker'],
    },
  ])('$case', ({ spec, there, want }) => {
    expect(actionsFor(spec as Partial<ObservabilityServiceSpec>, there)).toEqual(want);
  });
});
