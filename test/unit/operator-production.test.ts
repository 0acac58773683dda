/**
 * What a production cluster needs around the migration: Pod templates (placement, identity,
 * restricted security, extra env that cannot touch the operator's variables), PodDisruptionBudgets,
 * surge-only rollouts, the server settings reachable from the spec (judged by the server's own
 * configuration parser), and the hash of the Secret keys each role reads.
 */
import { createHash } from 'node:crypto';
import type { V1Container, V1EnvVar, V1PodSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { buildCrd } from '../../operator/api/crd.ts';
import type { OpenApi } from '../../operator/api/schema.ts';
import { OPERATOR_OWNED_ENV } from '../../operator/api/template.ts';
import type { MigrationState, ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { renderDisruptionBudget } from '../../operator/render/disruption.ts';
import { renderJob } from '../../operator/render/jobs.ts';
import { CONFIG_HASH_ANNOTATION, INPUTS_HASH_ANNOTATION } from '../../operator/render/names.ts';
import {
  type SourceDigests,
  type SourceRef,
  sourcesHash,
  sourcesRead,
} from '../../operator/render/sources.ts';
import { configHashOf, renderDeployment } from '../../operator/render/workloads.ts';
import { sourceDigests } from '../../operator/runtime/observe.ts';
import { loadConfig } from '../../server/kernel/config/env.ts';
import { renderContext, renderSpec } from '../fixtures/operator/render-context.ts';

const base = renderSpec({ passwordSecretRef: { name: 'ch', key: 'password' } });
const podOf = (spec: ObservabilityServiceSpec, role: 'web' | 'worker', state: MigrationState = 'Dual') =>
  renderDeployment(renderContext(spec), role, state).spec!.template;
const containerOf = (pod: { spec?: V1PodSpec }): V1Container => pod.spec!.containers[0]!;

/** The environment a Pod would see, with every secretKeyRef resolved to a plausible value. */
function resolvedEnv(env: V1EnvVar[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of env) {
    if (e.value !== undefined) out[e.name] = e.value;
    else if (e.valueFrom?.secretKeyRef) out[e.name] = e.name.endsWith('URL') ? 'http://db.example:1' : 'x';
  }
  return out;
}

describe('server settings reachable from the spec, read back by the server', () => {
  const rows: {
    field: string;
    spec: Partial<ObservabilityServiceSpec>;
    role: 'web' | 'worker';
    read: (c: ReturnType<typeof loadConfig>) => unknown;
    want: unknown;
  }[] = [
    {
      field: 'propagation.intervalSeconds',
      spec: { propagation: { intervalSeconds: 15 } },
      role: 'worker',
      read: (c) => c.propagationIntervalSeconds,
      want: 15,
    },
    {
      field: 'propagation.graceSeconds',
      spec: { propagation: { graceSeconds: 0 } },
      role: 'worker',
      read: (c) => c.propagationGraceSeconds,
      want: 0,
    },
    {
      field: 'propagation.chunkRows',
      spec: { propagation: { chunkRows: 2_000 } },
      role: 'worker',
      read: (c) => c.propagationChunkRows,
      want: 2_000,
    },
    {
      field: 'propagation defaults',
      spec: {},
      role: 'worker',
      read: (c) => [c.propagationIntervalSeconds, c.propagationGraceSeconds, c.propagationChunkRows],
      want: [60, 30, 500_000],
    },
    {
      field: 'datastores.clickhouse.clusterEnabled + clusterName',
      spec: {
        datastores: {
          ...base.datastores,
          clickhouse: { ...base.datastores.clickhouse, clusterEnabled: true, clusterName: 'analytics_main' },
        },
      },
      role: 'worker',
      read: (c) => [c.clickhouse.clusterEnabled, c.clickhouse.clusterName],
      want: [true, 'analytics_main'],
    },
    {
      field: 'datastores.clickhouse.useLightweightUpdate',
      spec: {
        datastores: {
          ...base.datastores,
          clickhouse: { ...base.datastores.clickhouse, useLightweightUpdate: true },
        },
      },
      role: 'web',
      read: (c) => c.clickhouse.useLightweightUpdate,
      want: true,
    },
    {
      field: 'web.maxInFlightWrites',
      spec: { web: { maxInFlightWrites: 512 } },
      role: 'web',
      read: (c) => c.maxInFlightWrites,
      want: 512,
    },
    {
      field: 'logLevel',
      spec: { logLevel: 'debug' },
      role: 'worker',
      read: (c) => c.logLevel,
      want: 'debug',
    },
    { field: 'logLevel default', spec: {}, role: 'web', read: (c) => c.logLevel, want: 'info' },
    {
      field: 'metadata (the object itself)',
      spec: {},
      role: 'web',
      read: (c) => c.operatorObject,
      want: { namespace: 'obs', name: 'prod' },
    },
  ];
  it.each(rows)('$field reaches the $role as the server reads it', ({ spec, role, read, want }) => {
    const env = resolvedEnv(containerOf(podOf({ ...base, ...spec }, role)).env!);
    expect(read(loadConfig(env))).toEqual(want);
  });

  it('renders each role-specific setting only to its role', () => {
    const spec = {
      ...base,
      propagation: { intervalSeconds: 5, chunkRows: 3 },
      web: { maxInFlightWrites: 7 },
    };
    const web = resolvedEnv(containerOf(podOf(spec, 'web')).env!);
    const worker = resolvedEnv(containerOf(podOf(spec, 'worker')).env!);
    expect(web).toMatchObject({ SERVICE_INGESTION_MAX_IN_FLIGHT: '7' });
    expect(web).not.toHaveProperty('SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS');
    expect(web).not.toHaveProperty('SERVICE_EVENT_PROPAGATION_CHUNK_ROWS');
    expect(worker).toMatchObject({
      SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '5',
      SERVICE_EVENT_PROPAGATION_CHUNK_ROWS: '3',
    });
    expect(worker).not.toHaveProperty('SERVICE_INGESTION_MAX_IN_FLIGHT');
    expect(worker).not.toHaveProperty('SERVICE_OPERATOR_OBJECT');
  });

  it('the CRD bounds each setting exactly as the server does', () => {
    const spec = buildCrd().spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!;
    const at = (...path: string[]) => path.reduce((n: OpenApi, k) => n.properties![k]!, spec);
    expect(at('propagation', 'intervalSeconds')).toMatchObject({ minimum: 1, maximum: 3600, default: 60 });
    expect(at('propagation', 'graceSeconds')).toMatchObject({ minimum: 0, maximum: 3600, default: 30 });
    expect(at('propagation', 'chunkRows')).toMatchObject({
      minimum: 1,
      maximum: 100_000_000,
      default: 500_000,
    });
    expect(at('web', 'maxInFlightWrites')).toMatchObject({ minimum: 1, maximum: 10_000, default: 64 });
    expect(at('logLevel').enum).toEqual(['fatal', 'error', 'warn', 'info', 'debug', 'trace']);
    // ...and the server refuses what the CRD refuses.
    for (const [name, value] of [
      ['SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS', '0'],
      ['SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS', '3601'],
      ['SERVICE_EVENT_PROPAGATION_GRACE_SECONDS', '-1'],
      ['SERVICE_EVENT_PROPAGATION_CHUNK_ROWS', '0'],
      ['SERVICE_EVENT_PROPAGATION_CHUNK_ROWS', '100000001'],
      ['SERVICE_INGESTION_MAX_IN_FLIGHT', '10001'],
      ['LOG_LEVEL', 'verbose'],
    ] as const)
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(name);
  });
});

describe('the variables the operator owns', () => {
  it('include every variable it renders, in every role and state, Jobs too', () => {
    const states: MigrationState[] = ['Release3', 'Legacy', 'Dual', 'EventsOnly'];
    const rendered = new Set<string>();
    for (const state of states) {
      for (const role of ['web', 'worker'] as const)
        for (const e of containerOf(podOf(base, role, state)).env!) rendered.add(e.name);
      const job = renderJob(renderContext(base), { purpose: 'migrate', state, image: 'i', attempt: 0 });
      for (const e of job.spec!.template.spec!.containers[0]!.env!) rendered.add(e.name);
    }
    expect([...rendered].filter((n) => !OPERATOR_OWNED_ENV.includes(n))).toEqual([]);
  });

  it('are refused in extra env by a CEL rule that names the variable', () => {
    const crd = buildCrd().spec.versions[0]!.schema.openAPIV3Schema;
    const env = crd.properties!.spec!.properties!.web!.properties!.template!.properties!.env!;
    const [rule] = env.items!['x-kubernetes-validations']!;
    for (const name of OPERATOR_OWNED_ENV) expect(rule!.rule).toContain(`'${name}'`);
    expect(rule!.messageExpression).toContain('self.name');
    expect(env['x-kubernetes-list-type']).toBe('map');
  });
});

describe('Pod templates', () => {
  const template = {
    metadata: { labels: { team: 'obs', 'app.kubernetes.io/name': 'hijack' }, annotations: { a: 'b' } },
    nodeSelector: { pool: 'observability' },
    tolerations: [
      { key: 'dedicated', operator: 'Equal' as const, value: 'obs', effect: 'NoSchedule' as const },
    ],
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname' } },
        ],
      },
    },
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway' as const,
      },
    ],
    priorityClassName: 'high',
    serviceAccountName: 'observatory-web',
    imagePullSecrets: [{ name: 'registry' }],
    podSecurityContext: { runAsUser: 20000 },
    containerSecurityContext: { readOnlyRootFilesystem: false },
    env: [{ name: 'HTTPS_PROXY', value: 'http://proxy:3128' }],
    envFrom: [{ configMapRef: { name: 'extra' } }],
    volumes: [{ name: 'ca', configMap: { name: 'ca-bundle' } }],
    volumeMounts: [{ name: 'ca', mountPath: '/etc/ssl/custom', readOnly: true }],
  };
  const pod = podOf({ ...base, web: { template } }, 'web');
  const c = containerOf(pod);

  it.each([
    ['nodeSelector', pod.spec!.nodeSelector, template.nodeSelector],
    ['tolerations', pod.spec!.tolerations, template.tolerations],
    ['affinity', pod.spec!.affinity, template.affinity],
    ['priorityClassName', pod.spec!.priorityClassName, 'high'],
    ['serviceAccountName', pod.spec!.serviceAccountName, 'observatory-web'],
    ['imagePullSecrets', pod.spec!.imagePullSecrets, [{ name: 'registry' }]],
    ['annotations.a', pod.metadata!.annotations!.a, 'b'],
    ['labels.team', pod.metadata!.labels!.team, 'obs'],
    ['envFrom', c.envFrom, [{ configMapRef: { name: 'extra' } }]],
  ])('%s is carried to the Pod', (_, got, want) => {
    expect(got).toEqual(want);
  });

  it("keeps the operator's labels, merges security fields over the restricted defaults, appends env", () => {
    expect(pod.metadata!.labels!['app.kubernetes.io/name']).toBe('observatory');
    expect(pod.spec!.securityContext).toMatchObject({
      runAsUser: 20000,
      runAsNonRoot: true,
      runAsGroup: 10001,
    });
    expect(c.securityContext).toMatchObject({
      readOnlyRootFilesystem: false,
      allowPrivilegeEscalation: false,
    });
    expect(c.env!.at(-1)).toEqual({ name: 'HTTPS_PROXY', value: 'http://proxy:3128' });
    expect(c.volumeMounts).toEqual([
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'ca', mountPath: '/etc/ssl/custom', readOnly: true },
    ]);
    expect(pod.spec!.volumes!.map((v) => v.name)).toEqual(['tmp', 'ca']);
    // A spread constraint without a selector counts this role's own Pods.
    expect(pod.spec!.topologySpreadConstraints![0]!.labelSelector).toEqual({
      matchLabels: {
        'app.kubernetes.io/name': 'observatory',
        'app.kubernetes.io/instance': 'prod',
        'app.kubernetes.io/component': 'web',
      },
    });
  });

  it('the Jobs take their own template and resources', () => {
    const job = renderJob(
      renderContext({
        ...base,
        jobs: { template: { nodeSelector: { pool: 'batch' } }, resources: { limits: { memory: '2Gi' } } },
      }),
      { purpose: 'backfill-1', state: 'Dual', image: 'i', attempt: 0 },
    );
    const spec = job.spec!.template.spec!;
    expect(spec.nodeSelector).toEqual({ pool: 'batch' });
    expect(spec.restartPolicy).toBe('Never');
    expect(spec.containers[0]!.resources).toEqual({ limits: { memory: '2Gi' } });
  });

  /** The restricted Pod Security Standard's checks, from its published definition. */
  function restrictedViolations(spec: V1PodSpec): string[] {
    const out: string[] = [];
    const podCtx = spec.securityContext ?? {};
    const allowedVolumes = [
      'configMap',
      'csi',
      'downwardAPI',
      'emptyDir',
      'ephemeral',
      'persistentVolumeClaim',
      'projected',
      'secret',
    ];
    for (const v of spec.volumes ?? [])
      for (const k of Object.keys(v))
        if (k !== 'name' && !allowedVolumes.includes(k)) out.push(`volume type ${k}`);
    for (const c of spec.containers) {
      const s = c.securityContext ?? {};
      if (s.privileged) out.push('privileged');
      if (s.allowPrivilegeEscalation !== false) out.push('allowPrivilegeEscalation != false');
      if (!(s.runAsNonRoot ?? podCtx.runAsNonRoot)) out.push('runAsNonRoot != true');
      if ((s.runAsUser ?? podCtx.runAsUser) === 0) out.push('runAsUser 0');
      const seccomp = (s.seccompProfile ?? podCtx.seccompProfile)?.type;
      if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push('seccompProfile');
      if (!s.capabilities?.drop?.includes('ALL')) out.push('capabilities.drop ALL');
      for (const cap of s.capabilities?.add ?? [])
        if (cap !== 'NET_BIND_SERVICE') out.push(`capability ${cap}`);
    }
    return out;
  }

  it.each(['web', 'worker'] as const)(
    'the default %s Pod meets the restricted Pod Security Standard',
    (role) => {
      const p = podOf(base, role).spec!;
      expect(restrictedViolations(p)).toEqual([]);
      expect(p.securityContext).toMatchObject({ runAsUser: 10001, runAsGroup: 10001 });
      expect(p.containers[0]!.securityContext!.readOnlyRootFilesystem).toBe(true);
    },
  );

  it('a default Job Pod meets it too', () => {
    const job = renderJob(renderContext(base), {
      purpose: 'preflight',
      state: 'Legacy',
      image: 'i',
      attempt: 0,
    });
    expect(restrictedViolations(job.spec!.template.spec!)).toEqual([]);
  });
});

describe('PodDisruptionBudgets and rollout strategy', () => {
  it.each([
    { role: 'web', spec: {}, want: undefined },
    { role: 'web', spec: { web: { replicas: 3 } }, want: { maxUnavailable: 1 } },
    {
      role: 'worker',
      spec: { worker: { replicas: 2, podDisruptionBudget: { minAvailable: '50%' } } },
      want: { minAvailable: '50%' },
    },
    {
      role: 'worker',
      spec: { worker: { replicas: 2, podDisruptionBudget: { enabled: false } } },
      want: undefined,
    },
    {
      role: 'web',
      spec: { web: { podDisruptionBudget: { enabled: true, maxUnavailable: 0 } } },
      want: { maxUnavailable: 0 },
    },
  ] as const)('$role with $spec -> $want', ({ role, spec, want }) => {
    const pdb = renderDisruptionBudget(renderContext({ ...base, ...spec } as ObservabilityServiceSpec), role);
    if (want === undefined) return expect(pdb).toBeUndefined();
    expect(pdb!.metadata!.name).toBe(`prod-${role}`);
    expect(pdb!.metadata!.ownerReferences![0]).toMatchObject({
      kind: 'ObservabilityService',
      uid: 'u-1',
      controller: true,
    });
    expect(pdb!.spec).toEqual({
      selector: {
        matchLabels: renderDeployment(renderContext(base), role, 'Dual').spec!.selector.matchLabels,
      },
      ...want,
    });
  });

  it('Deployments surge and never take a ready Pod away first', () => {
    expect(renderDeployment(renderContext(base), 'web', 'Dual').spec!.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
    });
  });
});

describe('the hash of what each role reads', () => {
  const digests = (pgUrl: string, extra: Record<string, string> = {}): SourceDigests => ({
    secrets: { pg: { url: pgUrl, unrelated: 'u1', ...extra }, ch: { url: 'c', password: 'p' } },
    configMaps: { extra: { a: '1' } },
  });
  const refs: SourceRef[] = [
    { kind: 'Secret', name: 'pg', key: 'url' },
    { kind: 'ConfigMap', name: 'extra' },
  ];
  it.each([
    { case: 'same content', a: digests('d1'), b: digests('d1'), same: true },
    { case: 'a referenced key changed', a: digests('d1'), b: digests('d2'), same: false },
    {
      case: 'an unreferenced key changed',
      a: digests('d1'),
      b: digests('d1', { unrelated: 'u2' }),
      same: true,
    },
    {
      case: 'an envFrom source gained a key',
      a: digests('d1'),
      b: { ...digests('d1'), configMaps: { extra: { a: '1', b: '2' } } },
      same: false,
    },
    {
      case: 'the Secret became visible (labeled)',
      a: { secrets: {}, configMaps: {} },
      b: digests('d1'),
      same: false,
    },
    { case: 'nothing watched either time', a: undefined, b: { secrets: {}, configMaps: {} }, same: true },
  ])('$case: equal=$same', ({ a, b, same }) => {
    expect(sourcesHash(refs, a) === sourcesHash(refs, b)).toBe(same);
  });

  it('order of references does not matter', () => {
    expect(sourcesHash([...refs].reverse(), digests('d1'))).toBe(sourcesHash(refs, digests('d1')));
  });

  it('each role reads the datastore keys plus its own template sources', () => {
    const spec = {
      ...base,
      worker: {
        template: {
          env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'tok', key: 'v' } } }],
          envFrom: [{ secretRef: { name: 'bulk' } }],
        },
      },
    };
    const names = (role: 'web' | 'worker') => sourcesRead(spec, role).map((r) => `${r.name}/${r.key ?? '*'}`);
    expect(names('web')).toEqual(['pg/url', 'ch/url', 'redis/url', 'ch/password']);
    expect(names('worker')).toEqual(['pg/url', 'ch/url', 'redis/url', 'ch/password', 'tok/v', 'bulk/*']);
  });

  it('a rotated datastore key changes the Pod template (and so rolls the Pods); another key does not', () => {
    const render = (d: SourceDigests) => renderDeployment(renderContext(base, d), 'web', 'Dual');
    const before = render(digests('d1'));
    expect(before.spec!.template.metadata!.annotations![INPUTS_HASH_ANNOTATION]).toMatch(/^[0-9a-f]{16}$/);
    expect(configHashOf(render(digests('d2')))).not.toBe(configHashOf(before));
    expect(configHashOf(render(digests('d1', { unrelated: 'x' })))).toBe(configHashOf(before));
    expect(before.spec!.template.metadata!.annotations![CONFIG_HASH_ANNOTATION]).toBe(configHashOf(before));
  });
});

describe('digests of the watched Secrets and ConfigMaps (runtime side)', () => {
  const secret = (namespace: string, name: string, data: Record<string, string>) => ({
    metadata: { namespace, name },
    data,
  });
  it('keeps one SHA-256 per key, never a value, only for the object namespace', () => {
    const value = Buffer.from('postgres://user:hunter2@db/obs').toString('base64');
    const d = sourceDigests(
      'obs',
      [secret('obs', 'db', { url: value }), secret('other', 'db', { url: 'eA==' })],
      [{ metadata: { namespace: 'obs', name: 'extra' }, data: { a: '1' }, binaryData: { b: 'AAE=' } }],
    );
    expect(Object.keys(d.secrets)).toEqual(['db']);
    expect(d.secrets.db!.url).toBe(createHash('sha256').update(value).digest('hex'));
    expect(JSON.stringify(d)).not.toContain(value);
    expect(JSON.stringify(d)).not.toContain('hunter2');
    expect(Object.keys(d.configMaps.extra!).sort()).toEqual(['a', 'b']);
  });

  it('a changed value changes its digest and only its own', () => {
    const a = sourceDigests('obs', [secret('obs', 'db', { url: 'YQ==', other: 'Yg==' })], []);
    const b = sourceDigests('obs', [secret('obs', 'db', { url: 'Yw==', other: 'Yg==' })], []);
    expect(a.secrets.db!.url).not.toBe(b.secrets.db!.url);
    expect(a.secrets.db!.other).toBe(b.secrets.db!.other);
  });
});
