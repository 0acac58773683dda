// helm template | kubeconform -strict, against the Kubernetes schemas of the local cluster's
// version (generated from k8s.io/kubernetes' OpenAPI document) and the project's generated CRD.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../tools/paths.ts';
import { kubeconform, notesExample, renderNotes, template } from './helm.ts';

describe('helm template | kubeconform -strict', () => {
  it.each([
    [
      'default values',
      {},
      ['CustomResourceDefinition', 'Deployment', 'Role', 'RoleBinding', 'ServiceAccount'],
    ],
    [
      'rbac.clusterWide=true',
      { 'rbac.clusterWide': true },
      [
        'ClusterRole',
        'ClusterRoleBinding',
        'CustomResourceDefinition',
        'Deployment',
        'Role',
        'RoleBinding',
        'ServiceAccount',
      ],
    ],
    [
      'every optional object on',
      {
        'metrics.service.create': true,
        'operator.watchNamespace': 'team-a',
        'operator.extraEnv': [
          { name: 'LOG_LEVEL', value: 'debug' },
          { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
        ],
        'operator.extraEnvFrom': [{ configMapRef: { name: 'proxy' } }],
        'operator.extraVolumes': [
          { name: 'ca', secret: { secretName: 'ca', defaultMode: 0o440 } },
          { name: 'cache', emptyDir: { medium: 'Memory', sizeLimit: '16Mi' } },
        ],
        'operator.extraVolumeMounts': [{ name: 'ca', mountPath: '/etc/ca', readOnly: true }],
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'ops', effect: 'NoSchedule' }],
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] },
              ],
            },
          },
        },
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: 'kubernetes.io/hostname',
            whenUnsatisfiable: 'ScheduleAnyway',
            labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'observatory' } },
          },
        ],
        imagePullSecrets: [{ name: 'registry' }],
        podAnnotations: { team: 'ops' },
        priorityClassName: 'system-cluster-critical',
        'image.digest': `sha256:${'a'.repeat(64)}`,
      },
      ['CustomResourceDefinition', 'Deployment', 'Role', 'RoleBinding', 'Service', 'ServiceAccount'],
    ],
  ])('every rendered object is valid with %s', async (_label, values, kinds) => {
    const report = await kubeconform(await template(values));
    const invalid = report.resources.filter((r) => r.status !== 'statusValid');
    expect(invalid).toEqual([]);
    expect(report.code).toBe(0);
    expect(report.summary.skipped).toBe(0);
    expect([...new Set(report.resources.map((r) => r.kind))].sort()).toEqual(kinds);
  });

  it('the schemas have teeth: a misspelt field, a wrong type and a bad custom resource are refused', async () => {
    const manifests = [
      (await template()).replace('readOnlyRootFilesystem: true', 'readOnlyRootFilesytem: true'),
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\nrules: [{apiGroups: [""], resources: pods, verbs: [get]}]',
      'apiVersion: observatory.dev/v1alpha1\nkind: ObservabilityService\nmetadata: {name: x}\nspec: {release: "5", image: i}',
    ].join('\n---\n');
    const report = await kubeconform(manifests);
    const messages = Object.fromEntries(
      report.resources.filter((r) => r.status !== 'statusValid').map((r) => [r.kind, r.msg]),
    );
    expect(messages['Deployment']).toContain("'readOnlyRootFilesytem' not allowed");
    expect(messages['Role']).toMatch(/rules\/0\/resources.*want array/);
    expect(messages['ObservabilityService']).toMatch(/release|datastores/);
    expect(report.code).not.toBe(0);
  });

  it("NOTES.txt's example ObservabilityService is valid against the CRD", async () => {
    const { version } = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    for (const values of [[], ['--set', 'rbac.clusterWide=true']]) {
      const text = await renderNotes(values);
      const report = await kubeconform(notesExample(text));
      expect(report.resources).toMatchObject([{ kind: 'ObservabilityService', status: 'statusValid' }]);
      expect(text).toContain(`image: observatory:${version}`);
      expect(text).toContain('kubectl -n observatory-system get obsvc -w');
      expect(text).toMatch(
        /observatory\.dev\/approve-cutover="\$\(kubectl .* -o jsonpath='\{\.metadata\.generation\}'\)"/,
      );
      expect(text).toContain('secretKeyRef');
    }
  });
});
