/** Rendering of the children: names, labels, owner, env accepted by the server, probes, Jobs. */
import type { V1EnvVar } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../operator/api/effective.ts';
import type { MigrationState } from '../../operator/api/v1alpha1.ts';
import { jobArgs, jobNameFor, renderJob } from '../../operator/render/jobs.ts';
import { CONFIG_HASH_ANNOTATION } from '../../operator/render/names.ts';
import { configHashOf, renderDeployment, renderService } from '../../operator/render/workloads.ts';
import { findViolations } from '../../server/contract/write-modes.ts';
import { loadConfig } from '../../server/kernel/config/env.ts';
import { RENDER_META, renderSpec } from '../fixtures/operator/render-context.ts';

const raw = renderSpec(
  {
    userSecretRef: { name: 'ch', key: 'user' },
    passwordSecretRef: { name: 'ch', key: 'password' },
    database: 'obs',
    clusterEnabled: true,
  },
  { worker: { replicas: 2 } },
);
const meta = { ...RENDER_META, generation: 3 };
const ctx = { meta, spec: withDefaults(raw) };
const envOf = (env: V1EnvVar[]) => Object.fromEntries(env.map((e) => [e.name, e.value ?? e.valueFrom]));
const STATES: MigrationState[] = ['Release3', 'Legacy', 'Dual', 'EventsOnly'];

describe('Deployments and Services', () => {
  it('are named, labelled and owned as the architecture fixes it', () => {
    const d = renderDeployment(ctx, 'worker', 'Dual');
    expect(d.metadata!.name).toBe('prod-worker');
    expect(d.metadata!.labels).toEqual({
      'app.kubernetes.io/name': 'observatory',
      'app.kubernetes.io/instance': 'prod',
      'app.kubernetes.io/component': 'worker',
      'app.kubernetes.io/managed-by': 'observatory-operator',
    });
    expect(d.metadata!.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'ObservabilityService', name: 'prod', uid: 'u-1', controller: true }),
    ]);
    expect(d.spec!.replicas).toBe(2);
    const c = d.spec!.template.spec!.containers[0]!;
    expect(c.image).toBe('observatory:dev');
    expect(c.args).toEqual(['worker']);
    expect(renderService(ctx, 'web').spec!.ports).toEqual([
      { name: 'http', port: 3000, targetPort: 'http' },
      { name: 'otlp-grpc', port: 4317, targetPort: 'otlp-grpc', appProtocol: 'grpc' },
    ]);
    expect(renderService(ctx, 'worker').spec!.ports![0]!.port).toBe(3030);
  });

  it("gives the web's /metrics a port of its own that the web Service leaves out, and OTLP/gRPC 4317", () => {
    const web = renderDeployment(ctx, 'web', 'Dual').spec!.template.spec!.containers[0]!;
    expect(web.ports).toEqual([
      { name: 'http', containerPort: 3000 },
      { name: 'otlp-grpc', containerPort: 4317 },
      { name: 'metrics', containerPort: 3001 },
    ]);
    expect(web.env).toContainEqual({ name: 'METRICS_PORT', value: '3001' });
    const worker = renderDeployment(ctx, 'worker', 'Dual').spec!.template.spec!.containers[0]!;
    expect(worker.ports).toEqual([{ name: 'http', containerPort: 3030 }]);
    expect(worker.env!.map((e) => e.name)).not.toContain('METRICS_PORT');
  });

  it.each(STATES)('renders an environment the server accepts in %s', (state) => {
    for (const role of ['web', 'worker'] as const) {
      const env = renderDeployment(ctx, role, state).spec!.template.spec!.containers[0]!.env!;
      const plain = Object.fromEntries(
        env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]),
      );
      expect(findViolations(loadConfig(plain).mode)).toEqual([]);
      expect(plain['SERVICE_RELEASE']).toBe(state === 'Release3' ? '3' : '4');
      expect(plain['SERVICE_AUTO_MIGRATION_DISABLED']).toBe('true');
      expect(plain['SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER']).toBe('false');
      expect(plain['PORT']).toBe(role === 'web' ? '3000' : '3030');
    }
  });

  it('maps the state to the service settings (G1), with the backfill gate closed in Legacy', () => {
    const env = (s: MigrationState) =>
      envOf(renderDeployment(ctx, 'web', s).spec!.template.spec!.containers[0]!.env!);
    expect(env('Legacy')).toMatchObject({
      SERVICE_MIGRATION_V4_WRITE_MODE: 'legacy',
      SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: 'direct',
      SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL: 'false',
    });
    expect(env('Dual')).toMatchObject({ SERVICE_MIGRATION_V4_WRITE_MODE: 'dual' });
    expect(env('EventsOnly')).toMatchObject({
      SERVICE_MIGRATION_V4_WRITE_MODE: 'events_only',
      SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: 'direct',
      SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN: 'true',
    });
    expect(env('Release3')['SERVICE_MIGRATION_V4_WRITE_MODE']).toBeUndefined();
  });

  it('takes connection settings only from Secrets', () => {
    const env = envOf(renderDeployment(ctx, 'web', 'Dual').spec!.template.spec!.containers[0]!.env!);
    for (const [name, key] of [
      ['DATABASE_URL', 'url'],
      ['CLICKHOUSE_URL', 'url'],
      ['REDIS_URL', 'url'],
      ['CLICKHOUSE_USER', 'user'],
      ['CLICKHOUSE_PASSWORD', 'password'],
    ])
      expect(env[name!]).toEqual({ secretKeyRef: expect.objectContaining({ key }) });
    expect(env['CLICKHOUSE_DB']).toBe('obs');
    expect(env['COLUMNAR_CLUSTER_ENABLED']).toBe('true');
    expect(env['POD_NAME']).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
  });

  it('probes the web and the worker, failing the worker on stuck propagation only in Dual', () => {
    const web = renderDeployment(ctx, 'web', 'Dual').spec!.template.spec!.containers[0]!;
    expect(web.readinessProbe!.httpGet).toEqual({ path: '/api/public/ready', port: 3000 });
    expect(web.livenessProbe!.httpGet).toEqual({ path: '/api/public/health', port: 3000 });
    const dual = renderDeployment(ctx, 'worker', 'Dual').spec!.template.spec!.containers[0]!;
    expect(dual.readinessProbe!.httpGet!.path).toBe('/api/ready');
    expect(dual.livenessProbe!.httpGet!.path).toBe('/api/health?failIfEventPropagationStuck=true');
    expect(dual.livenessProbe!.initialDelaySeconds).toBeGreaterThanOrEqual(60);
    const legacy = renderDeployment(ctx, 'worker', 'Legacy').spec!.template.spec!.containers[0]!;
    expect(legacy.livenessProbe!.httpGet!.path).toBe('/api/health');
  });

  it('changes the config hash on the pod template when settings change, and only then', () => {
    const a = renderDeployment(ctx, 'web', 'Dual');
    expect(a.spec!.template.metadata!.annotations![CONFIG_HASH_ANNOTATION]).toBe(configHashOf(a));
    expect(configHashOf(renderDeployment(ctx, 'web', 'Dual'))).toBe(configHashOf(a));
    expect(configHashOf(renderDeployment(ctx, 'web', 'EventsOnly'))).not.toBe(configHashOf(a));
    const other = { meta, spec: withDefaults({ ...raw, propagation: { stuckThresholdMinutes: 30 } }) };
    expect(configHashOf(renderDeployment(other, 'web', 'Dual'))).not.toBe(configHashOf(a));
    const scaled = { meta, spec: withDefaults({ ...raw, web: { replicas: 4 } }) };
    expect(configHashOf(renderDeployment(scaled, 'web', 'Dual'))).toBe(configHashOf(a));
  });
});

describe('Jobs', () => {
  it.each([
    ['preflight', ['preflight', '--json']],
    ['migrate', ['migrate', 'up']],
    ['rollback', ['migrate', 'down', '--to', '37']],
    ['backfill-2', ['backfill', 'run', '--step', '2']],
    ['backfill-retry-2', ['backfill', 'retry', '--step', '2']],
    ['cleanup', ['cleanup', 'truncate-legacy-tables']],
  ] as const)('%s runs observatory %o', (purpose, args) => {
    expect(jobArgs(purpose)).toEqual(args);
  });

  it('has deterministic names per attempt, within 63 characters', () => {
    const a = jobNameFor(ctx, { purpose: 'backfill-3', attempt: 0 });
    expect(a).toMatch(/^prod-backfill-3-[0-9a-f]{8}$/);
    expect(jobNameFor(ctx, { purpose: 'backfill-3', attempt: 0 })).toBe(a);
    expect(jobNameFor(ctx, { purpose: 'backfill-3', attempt: 1 })).not.toBe(a);
    const long = { meta: { ...meta, name: 'x'.repeat(56) }, spec: ctx.spec };
    expect(jobNameFor(long, { purpose: 'backfill-retry-5', attempt: 0 }).length).toBeLessThanOrEqual(63);
  });

  it('opens the backfill gate only for backfill Jobs, in a mode the server accepts', () => {
    const gate = (purpose: 'backfill-1' | 'migrate') => {
      const job = renderJob(ctx, { purpose, state: 'Dual', image: 'observatory:dev', attempt: 0 });
      const env = envOf(job.spec!.template.spec!.containers[0]!.env!);
      expect(job.spec!.template.spec!.restartPolicy).toBe('Never');
      expect(job.metadata!.labels!['app.kubernetes.io/component']).toBe(purpose);
      return env['SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL'];
    };
    expect(gate('backfill-1')).toBe('true');
    const noBackfill = { meta, spec: withDefaults({ ...raw, backfill: { enabled: false } }) };
    const migrate = renderJob(noBackfill, { purpose: 'migrate', state: 'Dual', image: 'x', attempt: 0 });
    expect(
      envOf(migrate.spec!.template.spec!.containers[0]!.env!)[
        'SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL'
      ],
    ).toBe('false');
    expect(
      renderJob(ctx, { purpose: 'backfill-1', state: 'Dual', image: 'x', attempt: 0 }).spec!.backoffLimit,
    ).toBe(0);
  });

  it.each([
    { purpose: 'backfill-2', backfill: undefined, env: ['200000', '0', '1'] },
    {
      purpose: 'backfill-5',
      backfill: { chunkRows: 3, throttleMs: 150, concurrency: 2 },
      env: ['3', '150', '2'],
    },
    { purpose: 'backfill-retry-2', backfill: { chunkRows: 3 }, env: [undefined, undefined, undefined] },
    { purpose: 'migrate', backfill: { chunkRows: 3 }, env: [undefined, undefined, undefined] },
  ] as const)(
    'renders the backfill tuning into the Jobs that run a step: $purpose',
    ({ purpose, backfill, env }) => {
      const c = { meta, spec: withDefaults({ ...raw, ...(backfill ? { backfill } : {}) }) };
      const vars = envOf(
        renderJob(c, { purpose, state: 'Dual', image: 'x', attempt: 0 }).spec!.template.spec!.containers[0]!
          .env!,
      );
      expect([
        vars['SERVICE_BACKFILL_CHUNK_ROWS'],
        vars['SERVICE_BACKFILL_THROTTLE_MS'],
        vars['SERVICE_BACKFILL_CONCURRENCY'],
      ]).toEqual(env);
    },
  );

  it.each([
    { purpose: 'preflight', jobs: undefined, ttl: 86_400 },
    { purpose: 'migrate', jobs: {}, ttl: 86_400 },
    { purpose: 'backfill-3', jobs: { ttlSecondsAfterFinished: 3600 }, ttl: 3600 },
    { purpose: 'cleanup', jobs: { ttlSecondsAfterFinished: 60 }, ttl: 60 },
  ] as const)('every Job carries ttlSecondsAfterFinished: $purpose -> $ttl', ({ purpose, jobs, ttl }) => {
    const c = { meta, spec: withDefaults({ ...raw, ...(jobs ? { jobs } : {}) }) };
    const job = renderJob(c, { purpose, state: 'Dual', image: 'x', attempt: 0 });
    expect(job.spec!.ttlSecondsAfterFinished).toBe(ttl);
  });
  it.each([
    { purpose: 'preflight', records: true },
    { purpose: 'migrate', records: true },
    { purpose: 'rollback', records: true },
    { purpose: 'cleanup', records: true },
    { purpose: 'backfill-2', records: false },
    { purpose: 'backfill-retry-2', records: false },
  ] as const)(
    'names the Job to the commands that record their result under it: $purpose -> $records',
    ({ purpose, records }) => {
      const request = { purpose, state: 'Dual', image: 'x', attempt: 1, inputs: { pass: 'p' } } as const;
      const job = renderJob(ctx, request);
      const vars = envOf(job.spec!.template.spec!.containers[0]!.env!);
      expect(vars['SERVICE_JOB_NAME']).toBe(records ? job.metadata!.name : undefined);
    },
  );
});
