// The operator's RBAC is exactly the least privilege it needs: compared rule by rule (as
// group/resource/verb/name tuples, so the grouping of rules does not matter) with the list below,
// for the namespaced default and the cluster-wide variant. Secrets and ConfigMaps read-only (list
// and watch, for Secret rollouts) and gone with secretRollouts.enabled=false; ConfigMaps also
// create and patch (the backup records, never read back); no wildcards.
import { describe, expect, it } from 'vitest';
import { find, type Manifest, releaseName, releaseNamespace, render } from './helm.ts';

const fullname = `${releaseName}-observatory`;
const leaseName = `${fullname}-leader`;
const crud = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

/** What the operator reconciles with, in the watched namespace(s). */
const reconcileRules: [group: string, resource: string, verbs: string[]][] = [
  ['observatory.dev', 'observabilityservices', ['get', 'list', 'watch', 'update', 'patch']],
  ['observatory.dev', 'observabilityservices/status', ['get', 'update', 'patch']],
  ['observatory.dev', 'observabilityservices/finalizers', ['update']],
  ['apps', 'deployments', crud],
  ['', 'services', crud],
  ['batch', 'jobs', ['get', 'list', 'watch', 'create', 'patch', 'delete']],
  ['', 'pods', ['get', 'list', 'watch']],
  ['policy', 'poddisruptionbudgets', ['get', 'list', 'watch', 'create', 'patch', 'delete']],
  ['networking.k8s.io', 'networkpolicies', ['list', 'watch', 'create', 'patch', 'delete']],
  ['', 'secrets', ['list', 'watch']],
  ['', 'configmaps', ['list', 'watch']],
  // The record of each backup (a ConfigMap per backup), written, never read, deleted with its backup.
  ['', 'configmaps', ['create', 'patch', 'delete']],
  ['', 'events', ['create', 'patch']],
  ['events.k8s.io', 'events', ['create', 'patch']],
];

function tuples(rules: [string, string, string[], string[]?][]): string[] {
  return rules
    .flatMap(([group, resource, verbs, names]) =>
      verbs.flatMap((verb) => (names ?? ['*any*']).map((name) => `${group}|${resource}|${verb}|${name}`)),
    )
    .sort();
}

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

function ruleTuples(role: Manifest): string[] {
  const rules = role.rules as PolicyRule[];
  expect(rules.every((rule) => rule.nonResourceURLs === undefined)).toBe(true);
  return tuples(
    rules.flatMap((rule) =>
      (rule.apiGroups ?? []).flatMap((group) =>
        (rule.resources ?? []).map(
          (resource) =>
            [group, resource, rule.verbs, rule.resourceNames] as [string, string, string[], string[]?],
        ),
      ),
    ),
  );
}

function expectBinding(binding: Manifest, kind: string, role: Manifest) {
  expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind, name: role.metadata.name });
  expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: fullname, namespace: releaseNamespace }]);
  expect(binding.metadata.namespace).toBe(role.metadata.namespace);
}

function expectSecretsReadOnlyNoWildcards(manifests: Manifest[]) {
  for (const role of manifests.filter((m) => m.kind === 'Role' || m.kind === 'ClusterRole')) {
    for (const rule of role.rules as PolicyRule[]) {
      if ((rule.resources ?? []).includes('secrets')) expect(rule.verbs).toEqual(['list', 'watch']);
      for (const field of [rule.apiGroups, rule.resources, rule.verbs, rule.resourceNames]) {
        expect((field ?? []).some((value) => value.includes('*'))).toBe(false);
      }
    }
  }
}

const leaseRules = tuples([
  ['coordination.k8s.io', 'leases', ['create']],
  ['coordination.k8s.io', 'leases', ['get', 'update', 'patch'], [leaseName]],
]);

describe('RBAC', () => {
  it('namespaced by default: a Role in the release namespace with exactly the reconcile rules, and a Lease Role by name', async () => {
    const manifests = await render();
    expect(
      manifests.filter((m) => m.kind.startsWith('Cluster') && m.kind !== 'CustomResourceDefinition'),
    ).toEqual([]);
    const role = find(manifests, 'Role', fullname);
    expect(role.metadata.namespace).toBe(releaseNamespace);
    expect(ruleTuples(role)).toEqual(tuples(reconcileRules));
    expectBinding(find(manifests, 'RoleBinding', fullname), 'Role', role);

    const leases = find(manifests, 'Role', `${fullname}-leader-election`);
    expect(leases.metadata.namespace).toBe(releaseNamespace);
    expect(ruleTuples(leases)).toEqual(leaseRules);
    expectBinding(find(manifests, 'RoleBinding', `${fullname}-leader-election`), 'Role', leases);

    // The Lease the operator is told to use is the one it may touch.
    const env = find(manifests, 'Deployment').spec.template.spec.containers[0].env as {
      name: string;
      value?: string;
    }[];
    expect(env.find((e) => e.name === 'OPERATOR_LEASE_NAME')?.value).toBe(leaseName);
    expectSecretsReadOnlyNoWildcards(manifests);
  });

  it('rbac.clusterWide: a ClusterRole with the same rules; Leases stay namespaced and by name', async () => {
    const manifests = await render({ 'rbac.clusterWide': true });
    expect(manifests.filter((m) => m.kind === 'Role').map((m) => m.metadata.name)).toEqual([
      `${fullname}-leader-election`,
    ]);
    const clusterRole = find(manifests, 'ClusterRole', fullname);
    expect(clusterRole.metadata.namespace).toBeUndefined();
    expect(ruleTuples(clusterRole)).toEqual(tuples(reconcileRules));
    expectBinding(find(manifests, 'ClusterRoleBinding', fullname), 'ClusterRole', clusterRole);
    expect(ruleTuples(find(manifests, 'Role', `${fullname}-leader-election`))).toEqual(leaseRules);
    expectSecretsReadOnlyNoWildcards(manifests);
  });

  it('operator.watchNamespace: the reconcile Role lives in the watched namespace, the Lease Role in the release namespace', async () => {
    const manifests = await render({ 'operator.watchNamespace': 'team-a' });
    expect(find(manifests, 'Role', fullname).metadata.namespace).toBe('team-a');
    expect(find(manifests, 'RoleBinding', fullname).metadata.namespace).toBe('team-a');
    expect(find(manifests, 'Role', `${fullname}-leader-election`).metadata.namespace).toBe(releaseNamespace);
  });

  it('secretRollouts.enabled=false: no access to Secrets or ConfigMaps, and the operator is told so', async () => {
    const manifests = await render({ 'secretRollouts.enabled': false });
    const withoutSources = reconcileRules.filter(
      ([, resource, verbs]) => !['secrets', 'configmaps'].includes(resource) || !verbs.includes('list'),
    );
    expect(ruleTuples(find(manifests, 'Role', fullname))).toEqual(tuples(withoutSources));
    const env = find(manifests, 'Deployment').spec.template.spec.containers[0].env as {
      name: string;
      value?: string;
    }[];
    expect(env.find((e) => e.name === 'OPERATOR_SECRET_ROLLOUTS')?.value).toBe('false');
  });

  it('without leader election there is no Lease access; rbac.create=false renders no RBAC', async () => {
    const noLeader = await render({ 'leaderElection.enabled': false });
    expect(noLeader.filter((m) => m.kind === 'Role').map((m) => m.metadata.name)).toEqual([fullname]);
    const noRbac = await render({ 'rbac.create': false });
    expect(noRbac.filter((m) => /Role/.test(m.kind))).toEqual([]);
  });
});
