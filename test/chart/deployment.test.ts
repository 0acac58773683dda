// The operator Deployment as rendered: one image (the chart's appVersion by default) running the
// operator's bundle (`observatory operator` built into one module), non-root and locked down,
// probed on 8081, metrics on 8080, and the OPERATOR_* environment the operator reads.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../tools/paths.ts';
import { find, type Manifest, releaseName, releaseNamespace, render } from './helm.ts';

const fullname = `${releaseName}-observatory`;

function operatorContainer(manifests: Manifest[]) {
  const deployment = find(manifests, 'Deployment', fullname);
  const containers = deployment.spec.template.spec.containers as Manifest[];
  expect(containers.map((c) => c.name)).toEqual(['operator']);
  return { deployment, pod: deployment.spec.template.spec, container: containers[0]! };
}

function envOf(container: Manifest): Record<string, unknown> {
  return Object.fromEntries(
    (container.env as { name: string; value?: string; valueFrom?: unknown }[]).map((e) => [
      e.name,
      e.valueFrom ?? e.value,
    ]),
  );
}

describe('operator Deployment', () => {
  it("runs the image's operator bundle, non-root, read-only, without capabilities", async () => {
    const { version } = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    const { deployment, pod, container } = operatorContainer(await render());
    expect(deployment.metadata.namespace).toBe(releaseNamespace);
    expect(container.image).toBe(`observatory:${version}`);
    // The bundle the image's build stage makes, at the path its final stage copies it to (relative
    // to the image's WORKDIR), instead of the ENTRYPOINT (the CLI run from the sources).
    expect(container.command).toEqual(['node', 'operator/dist/operator.mjs']);
    expect(container.args).toBeUndefined();
    const dockerfile = await readFile(join(repoRoot, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^WORKDIR \/app$/m);
    expect(dockerfile).toContain(
      'COPY --from=build /app/operator/dist/operator.mjs ./operator/dist/operator.mjs',
    );
    expect(pod.serviceAccountName).toBe(fullname);
    expect(find(await render(), 'ServiceAccount', fullname).metadata.namespace).toBe(releaseNamespace);

    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    // A read-only root filesystem still needs a writable /tmp.
    expect(container.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(pod.volumes).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }]);
    expect(container.resources.requests).toMatchObject({
      cpu: expect.any(String),
      memory: expect.any(String),
    });
    expect(container.resources.limits).toMatchObject({ memory: expect.any(String) });
  });

  it('is probed on the health port (8081) and exposes metrics on 8080', async () => {
    const { deployment, container } = operatorContainer(await render());
    expect(container.ports).toEqual([
      { name: 'metrics', containerPort: 8080, protocol: 'TCP' },
      { name: 'health', containerPort: 8081, protocol: 'TCP' },
    ]);
    expect(container.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'health' } });
    expect(container.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 'health' } });
    expect(deployment.spec.template.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '8080',
      'prometheus.io/path': '/metrics',
    });
  });

  it('sets the operator environment from values: leader election, Lease, own and watched namespace, Secret rollouts', async () => {
    const { container } = operatorContainer(await render());
    expect(envOf(container)).toEqual({
      OPERATOR_LEADER_ELECTION: 'true',
      OPERATOR_LEASE_NAME: `${fullname}-leader`,
      OPERATOR_NAMESPACE: { fieldRef: { fieldPath: 'metadata.namespace' } },
      POD_NAME: { fieldRef: { fieldPath: 'metadata.name' } },
      OPERATOR_WATCH_NAMESPACE: releaseNamespace,
      OPERATOR_METRICS_PORT: '8080',
      OPERATOR_HEALTH_PORT: '8081',
      OPERATOR_SECRET_ROLLOUTS: 'true',
      NODE_OPTIONS: '--max-semi-space-size=1',
      MALLOC_ARENA_MAX: '2',
    });
    const noRollouts = operatorContainer(await render({ 'secretRollouts.enabled': false })).container;
    expect(envOf(noRollouts)['OPERATOR_SECRET_ROLLOUTS']).toBe('false');

    const clusterWide = operatorContainer(await render({ 'rbac.clusterWide': true })).container;
    expect(envOf(clusterWide)['OPERATOR_WATCH_NAMESPACE']).toBe('');

    const custom = operatorContainer(
      await render({
        'leaderElection.leaseName': 'my-lease',
        'operator.watchNamespace': 'team-a',
        'operator.extraEnv': [{ name: 'LOG_LEVEL', value: 'debug' }],
        'operator.nodeOptions': '--max-semi-space-size=2',
        'operator.mallocArenaMax': 4,
      }),
    ).container;
    expect(envOf(custom)).toMatchObject({
      NODE_OPTIONS: '--max-semi-space-size=2',
      MALLOC_ARENA_MAX: '4',
      OPERATOR_LEASE_NAME: 'my-lease',
      OPERATOR_WATCH_NAMESPACE: 'team-a',
      LOG_LEVEL: 'debug',
    });

    const single = operatorContainer(await render({ 'leaderElection.enabled': false })).container;
    expect(envOf(single)['OPERATOR_LEADER_ELECTION']).toBe('false');
    expect(envOf(single)).not.toHaveProperty('OPERATOR_LEASE_NAME');
  });

  it("adds envFrom, volumes and mounts from values after the chart's own /tmp", async () => {
    const { pod, container } = operatorContainer(
      await render({
        'operator.extraEnvFrom': [
          { configMapRef: { name: 'proxy' } },
          { prefix: 'S_', secretRef: { name: 's' } },
        ],
        'operator.extraVolumes': [
          { name: 'ca', configMap: { name: 'ca-bundle', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        ],
        'operator.extraVolumeMounts': [{ name: 'ca', mountPath: '/etc/ssl/private-ca', readOnly: true }],
      }),
    );
    expect(container.envFrom).toEqual([
      { configMapRef: { name: 'proxy' } },
      { prefix: 'S_', secretRef: { name: 's' } },
    ]);
    expect(pod.volumes).toEqual([
      { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
      { name: 'ca', configMap: { name: 'ca-bundle', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    ]);
    expect(container.volumeMounts).toEqual([
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'ca', mountPath: '/etc/ssl/private-ca', readOnly: true },
    ]);
    expect(operatorContainer(await render()).container.envFrom).toBeUndefined();
  });

  it('moves ports, probes and the scrape annotation together when the ports change', async () => {
    const { deployment, container } = operatorContainer(
      await render({ 'operator.metricsPort': 9090, 'operator.healthPort': 9091 }),
    );
    expect(container.ports.map((p: { containerPort: number }) => p.containerPort)).toEqual([9090, 9091]);
    expect(envOf(container)).toMatchObject({ OPERATOR_METRICS_PORT: '9090', OPERATOR_HEALTH_PORT: '9091' });
    expect(container.livenessProbe.httpGet.port).toBe('health');
    expect(deployment.spec.template.metadata.annotations['prometheus.io/port']).toBe('9090');
  });

  it('takes image repository, tag or digest from values', async () => {
    const tagged = operatorContainer(
      await render({ 'image.repository': 'registry.example/obs', 'image.tag': '1.2.3' }),
    );
    expect(tagged.container.image).toBe('registry.example/obs:1.2.3');
    const digest = `sha256:${'0'.repeat(64)}`;
    expect(operatorContainer(await render({ 'image.digest': digest })).container.image).toBe(
      `observatory@${digest}`,
    );
  });
});
