// The chart installed for real with helm on an API server (test/fixtures/api-server.ts; nothing here
// needs a node: the operator Pod is never started): the API server accepts every object (the CRD
// with its CEL rules, the RBAC, the Deployment), the RBAC grants the operator's service account
// what it needs and refuses the rest (reading a Secret by name, writing Secrets, updating ConfigMaps,
// other Leases, other namespaces), an upgrade updates the CRD, and an uninstall keeps it with the
// custom resources.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  AuthorizationV1Api,
  CustomObjectsApi,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { waitFor } from '../../cluster/wait.ts';
import { type ControlPlane, startControlPlane } from '../fixtures/api-server.ts';
import { chartDir } from '../tools/paths.ts';
import { helm, notesExample, releaseName, releaseNamespace, renderNotes } from './helm.ts';

const fullname = `${releaseName}-observatory`;
const crdName = 'observabilityservices.observatory.dev';
const serviceAccount = `system:serviceaccount:${releaseNamespace}:${fullname}`;

describe('helm install on a real API server', () => {
  let cluster: ControlPlane;
  let work: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'observatory-chart-install-'));
    // No CRDs up front: the chart installs its own.
    cluster = await startControlPlane({ crdDirs: [] });
  });
  afterAll(async () => {
    await cluster?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const helmOn = async (args: string[]) => {
    const result = await helm([...args, '--kubeconfig', cluster.kubeconfigPath]);
    expect(result.stderr.replace(/^WARNING: .*\n/gm, ''), `helm ${args.join(' ')}`).toBe('');
    expect(result.code).toBe(0);
    return result.stdout;
  };

  const crd = async () =>
    cluster.kubeconfig.makeApiClient(ApiextensionsV1Api).readCustomResourceDefinition({ name: crdName });
  const established = (c: V1CustomResourceDefinition) =>
    c.status?.conditions?.some((cond) => cond.type === 'Established' && cond.status === 'True') ?? false;

  async function allowed(verb: string, group: string, resource: string, namespace: string, name?: string) {
    const [res, subresource] = resource.split('/');
    const review = await cluster.kubeconfig.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
      body: {
        spec: {
          user: serviceAccount,
          groups: [
            'system:serviceaccounts',
            `system:serviceaccounts:${releaseNamespace}`,
            'system:authenticated',
          ],
          resourceAttributes: {
            verb,
            group,
            resource: res,
            namespace,
            ...(subresource ? { subresource } : {}),
            ...(name ? { name } : {}),
          },
        },
      },
    });
    return review.status?.allowed ?? false;
  }

  it('installs (CRD first, established), grants exactly the operator RBAC, accepts the NOTES example, upgrades the CRD, keeps it on uninstall', async () => {
    // Install from a copy whose CRD carries a marker label, so the upgrade below can be seen to update the CRD.
    const before = join(work, 'chart-before');
    await cp(chartDir, before, { recursive: true });
    const crdTemplate = join(before, 'templates', 'crds', 'observatory.dev_observabilityservices.yaml');
    const text = await readFile(crdTemplate, 'utf8');
    await writeFile(
      crdTemplate,
      text.replace(/\n {2}labels:\n/, '\n  labels:\n    observatory.dev/chart-test: before-upgrade\n'),
    );

    const installed = await helmOn([
      'install',
      releaseName,
      before,
      '--namespace',
      releaseNamespace,
      '--create-namespace',
    ]);
    expect(installed).toContain('STATUS: deployed');
    expect(installed).toContain('kubectl -n observatory-system get obsvc -w');
    await waitFor('the CRD to be established', async () => established(await crd()), { timeoutMs: 30_000 });
    expect((await crd()).metadata?.annotations?.['helm.sh/resource-policy']).toBe('keep');
    expect((await crd()).metadata?.labels?.['observatory.dev/chart-test']).toBe('before-upgrade');

    const deployment = await cluster.kubeconfig
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name: fullname, namespace: releaseNamespace });
    expect(deployment.spec?.template.spec?.serviceAccountName).toBe(fullname);

    // What the operator may do in its namespace...
    const grants: [string, string, string, string?][] = [
      ['watch', 'observatory.dev', 'observabilityservices'],
      ['patch', 'observatory.dev', 'observabilityservices'],
      ['update', 'observatory.dev', 'observabilityservices/status'],
      ['update', 'observatory.dev', 'observabilityservices/finalizers'],
      ['create', 'apps', 'deployments'],
      ['delete', '', 'services'],
      ['create', 'batch', 'jobs'],
      ['list', '', 'pods'],
      ['patch', 'policy', 'poddisruptionbudgets'],
      ['patch', 'networking.k8s.io', 'networkpolicies'],
      ['watch', '', 'secrets'],
      ['list', '', 'configmaps'],
      // One record ConfigMap per backup, written by server-side apply.
      ['create', '', 'configmaps'],
      ['patch', '', 'configmaps'],
      ['create', '', 'events'],
      ['patch', 'events.k8s.io', 'events'],
      ['create', 'coordination.k8s.io', 'leases'],
      ['update', 'coordination.k8s.io', 'leases', `${fullname}-leader`],
    ];
    for (const [verb, group, resource, name] of grants) {
      expect(
        await allowed(verb, group, resource, releaseNamespace, name),
        `${verb} ${group}/${resource} ${name ?? ''}`,
      ).toBe(true);
    }
    // ...and what it may not.
    const refusals: [string, string, string, string, string?][] = [
      ['get', '', 'secrets', releaseNamespace],
      ['update', '', 'secrets', releaseNamespace],
      ['update', '', 'configmaps', releaseNamespace],
      ['delete', 'observatory.dev', 'observabilityservices', releaseNamespace],
      ['create', '', 'pods', releaseNamespace],
      ['update', 'batch', 'jobs', releaseNamespace],
      ['update', 'coordination.k8s.io', 'leases', releaseNamespace, 'someone-elses-lease'],
      ['list', 'observatory.dev', 'observabilityservices', 'default'],
      ['create', 'apps', 'deployments', 'default'],
    ];
    for (const [verb, group, resource, namespace, name] of refusals) {
      expect(
        await allowed(verb, group, resource, namespace, name),
        `${verb} ${group}/${resource} in ${namespace} ${name ?? ''}`,
      ).toBe(false);
    }

    // The example NOTES.txt gives passes the real API server's validation (schema and CEL).
    const example = parse(notesExample(await renderNotes())) as {
      metadata: { name: string; namespace: string };
    };
    const objects = cluster.kubeconfig.makeApiClient(CustomObjectsApi);
    await objects.createNamespacedCustomObject({
      group: 'observatory.dev',
      version: 'v1alpha1',
      namespace: example.metadata.namespace,
      plural: 'observabilityservices',
      body: example,
    });

    // Upgrade with the real chart: the CRD is updated (marker gone), not left as installed.
    expect(await helmOn(['upgrade', releaseName, chartDir, '--namespace', releaseNamespace])).toContain(
      'STATUS: deployed',
    );
    expect((await crd()).metadata?.labels?.['observatory.dev/chart-test']).toBeUndefined();

    // Uninstall: the operator's objects go, the CRD and the ObservabilityService stay.
    const uninstalled = await helmOn(['uninstall', releaseName, '--namespace', releaseNamespace]);
    expect(uninstalled).toMatch(/kept due to the resource policy[\s\S]*CustomResourceDefinition/);
    expect(established(await crd())).toBe(true);
    const kept = await objects.getNamespacedCustomObject({
      group: 'observatory.dev',
      version: 'v1alpha1',
      namespace: example.metadata.namespace,
      plural: 'observabilityservices',
      name: example.metadata.name,
    });
    expect(kept).toMatchObject({ metadata: { name: example.metadata.name } });
    await expect(
      cluster.kubeconfig
        .makeApiClient(AppsV1Api)
        .readNamespacedDeployment({ name: fullname, namespace: releaseNamespace }),
    ).rejects.toMatchObject({ code: 404 });
  });
});
