/**
 * The ingestion log and the worker autoscaler in the spec: `spec.blobStorage.ingestionLog` read
 * back by the server's own configuration parser on web, worker and the restore Job (which replays
 * it; no other Job reads it), its bounds
 * in the CRD taken from the server's contract, and the reconciler's refusals, each naming the field.
 */
import type { V1EnvVar } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { buildCrd } from '../../operator/api/crd.ts';
import type { OpenApi } from '../../operator/api/schema.ts';
import { OPERATOR_OWNED_ENV } from '../../operator/api/template.ts';
import type { BlobStorage, ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { renderJob } from '../../operator/render/jobs.ts';
import { renderDeployment } from '../../operator/render/workloads.ts';
import { validate } from '../../operator/validation.ts';
import { ENV_DEFAULTS, ENV_LIMITS, INGESTION_LOG_ENV } from '../../server/contract/env.ts';
import { loadConfig } from '../../server/kernel/config/env.ts';
import { resolved } from '../fixtures/operator/kubelet-env.ts';
import { renderContext, renderSpec } from '../fixtures/operator/render-context.ts';

const base = renderSpec();
type Log = NonNullable<BlobStorage['ingestionLog']>;

const withLog = (ingestionLog: Log, extra: Partial<ObservabilityServiceSpec> = {}) => ({
  ...base,
  blobStorage: { ingestionLog },
  ...extra,
});
const envOf = (spec: ObservabilityServiceSpec, role: 'web' | 'worker'): V1EnvVar[] =>
  renderDeployment(renderContext(spec), role, 'Dual').spec!.template.spec!.containers[0]!.env!;

const jobEnv = (spec: ObservabilityServiceSpec, purpose: 'migrate' | 'backup' | 'restore'): V1EnvVar[] =>
  renderJob(renderContext(spec), {
    purpose,
    state: 'Dual',
    image: 'i',
    attempt: 0,
    ...(purpose === 'migrate' ? {} : { backup: { id: 'b1', include: ['analytics', 'relational'] } }),
  }).spec!.template.spec!.containers[0]!.env!;

const full: Log = {
  bucket: 'obs-log',
  prefix: 'log/',
  region: 'eu-west-1',
  endpoint: 'http://s3.storage.svc:9000',
  forcePathStyle: true,
  accessKeyIdSecretRef: { name: 'log', key: 'id' },
  secretAccessKeySecretRef: { name: 'log', key: 'secret' },
  waitForStore: false,
  backlogMaxAgeSeconds: 600,
  backlogMaxBytes: 2 * 1024 ** 3,
  retentionHours: 48,
  drainLeaseSeconds: 30,
};

describe('spec.blobStorage.ingestionLog read back by the server', () => {
  it.each([
    {
      case: 'every field',
      log: full,
      want: {
        s3: {
          bucket: 'obs-log',
          prefix: 'log/',
          region: 'eu-west-1',
          endpoint: 'http://s3.storage.svc:9000',
          forcePathStyle: true,
          credentials: { accessKeyId: 'log:id', secretAccessKey: 'log:secret' },
        },
        waitForStore: false,
        backlogMaxAgeSeconds: 600,
        backlogMaxBytes: 2 * 1024 ** 3,
        retentionHours: 48,
        drainLeaseSeconds: 30,
      },
    },
    {
      case: "bucket only: the server's defaults",
      log: { bucket: 'obs-log' },
      want: {
        s3: { bucket: 'obs-log', prefix: '', region: ENV_DEFAULTS.s3Region, credentials: undefined },
        waitForStore: ENV_DEFAULTS.ingestionLogWaitForStore,
        backlogMaxAgeSeconds: ENV_DEFAULTS.ingestionBacklogMaxAgeSeconds,
        backlogMaxBytes: ENV_DEFAULTS.ingestionBacklogMaxBytes,
        retentionHours: ENV_DEFAULTS.ingestionLogRetentionHours,
        drainLeaseSeconds: ENV_DEFAULTS.ingestionLogDrainLeaseSeconds,
      },
    },
  ])('$case, on web and worker alike', ({ log, want }) => {
    for (const role of ['web', 'worker'] as const)
      expect(loadConfig(resolved(envOf(withLog(log), role))).ingestionLog).toMatchObject(want);
  });

  it('absent: off, and the rendering unchanged', () => {
    expect(loadConfig(resolved(envOf(base, 'worker'))).ingestionLog.s3).toBeUndefined();
    expect(envOf({ ...base, blobStorage: {} }, 'web')).toEqual(envOf(base, 'web'));
  });

  it('credentials as Secret references only; every variable one the operator owns; other Jobs get none', () => {
    const env = envOf(withLog(full), 'worker');
    for (const e of env.filter((x) => /SECRET_ACCESS_KEY|ACCESS_KEY_ID/.test(x.name)))
      expect(e.valueFrom?.secretKeyRef?.name).toBe('log');
    expect(env.map((e) => e.name).filter((n) => !OPERATOR_OWNED_ENV.includes(n))).toEqual([]);
    for (const name of Object.values(INGESTION_LOG_ENV)) expect(OPERATOR_OWNED_ENV).toContain(name);
    for (const purpose of ['migrate', 'backup'] as const) {
      const names = jobEnv(withLog(full), purpose).map((e) => e.name);
      expect(names.filter((n) => n.includes('EVENT_UPLOAD') || n.includes('INGESTION'))).toEqual([]);
    }
  });

  it('the restore Job reads the log as web and worker do: it replays the writes the backup lacks', () => {
    for (const log of [full, { bucket: 'obs-log' }]) {
      const env = jobEnv(withLog(log, { backup: { destination: { bucket: 'obs-backups' } } }), 'restore');
      expect(loadConfig(resolved(env)).ingestionLog).toEqual(
        loadConfig(resolved(envOf(withLog(log), 'worker'))).ingestionLog,
      );
      for (const e of env.filter((x) => /SECRET_ACCESS_KEY|ACCESS_KEY_ID/.test(x.name)))
        expect(e.value).toBeUndefined();
    }
    expect(loadConfig(resolved(jobEnv(base, 'restore'))).ingestionLog.s3).toBeUndefined();
  });
});

describe('the CRD takes its bounds from the server contract', () => {
  const crdSpec = buildCrd().spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!;
  const at = (...path: string[]) => path.reduce((n: OpenApi, k) => n.properties![k]!, crdSpec);

  it.each([
    ['backlogMaxAgeSeconds', ENV_LIMITS.ingestionBacklogMaxAgeSeconds],
    ['backlogMaxBytes', ENV_LIMITS.ingestionBacklogMaxBytes],
    ['retentionHours', ENV_LIMITS.ingestionLogRetentionHours],
  ] as const)('%s', (field, { min, max }) => {
    expect(at('blobStorage', 'ingestionLog', field)).toMatchObject({ minimum: min, maximum: max });
    expect(at('blobStorage', 'ingestionLog', field).description).toContain('SERVICE_INGESTION_');
  });

  it('autoscaling: replicas within the role bounds, min <= max as a CEL rule, the log required on .spec', () => {
    const a = at('worker', 'autoscaling');
    expect(a.required).toEqual(['enabled', 'maxReplicas']);
    expect(a.properties!.maxReplicas).toMatchObject({ minimum: 1, maximum: 100 });
    expect(a['x-kubernetes-validations']?.[0]?.rule).toBe(
      '!has(self.minReplicas) || self.minReplicas <= self.maxReplicas',
    );
    expect(crdSpec['x-kubernetes-validations']?.map((r) => r.fieldPath)).toContain(
      '.worker.autoscaling.enabled',
    );
  });
});

describe('the reconciler refuses, naming the field', () => {
  const autoscaling = (a: Record<string, unknown>) =>
    ({
      worker: { autoscaling: { enabled: true, maxReplicas: 4, ...a } },
    }) as Partial<ObservabilityServiceSpec>;
  it.each([
    {
      case: 'backlog age below the server minimum',
      spec: withLog({ bucket: 'obs-log', backlogMaxAgeSeconds: 5 }),
      want: [
        {
          reason: 'OutOfRange',
          field: 'spec.blobStorage.ingestionLog.backlogMaxAgeSeconds',
          message: `spec.blobStorage.ingestionLog.backlogMaxAgeSeconds must be an integer between ${ENV_LIMITS.ingestionBacklogMaxAgeSeconds.min} and ${ENV_LIMITS.ingestionBacklogMaxAgeSeconds.max}`,
        },
      ],
    },
    {
      case: 'retention inside the sweeper window',
      spec: withLog({ bucket: 'obs-log', retentionHours: 24 }),
      want: [expect.objectContaining({ field: 'spec.blobStorage.ingestionLog.retentionHours' })],
    },
    {
      case: 'backlog bytes under a MiB',
      spec: withLog({ bucket: 'obs-log', backlogMaxBytes: 1000 }),
      want: [expect.objectContaining({ field: 'spec.blobStorage.ingestionLog.backlogMaxBytes' })],
    },
    {
      case: 'half the credentials',
      spec: withLog({ bucket: 'obs-log', accessKeyIdSecretRef: { name: 'log', key: 'id' } }),
      want: [
        expect.objectContaining({
          reason: 'BlobCredentialsIncomplete',
          field: 'spec.blobStorage.ingestionLog',
        }),
      ],
    },
    {
      case: 'autoscaling without the log',
      spec: { ...base, ...autoscaling({}) },
      want: [
        expect.objectContaining({
          reason: 'AutoscalingNeedsIngestionLog',
          field: 'spec.worker.autoscaling.enabled',
        }),
      ],
    },
    {
      case: 'autoscaling switched off needs no log',
      spec: { ...base, worker: { autoscaling: { enabled: false, maxReplicas: 4 } } },
      want: [],
    },
    {
      case: 'minReplicas above maxReplicas',
      spec: withLog({ bucket: 'obs-log' }, autoscaling({ minReplicas: 5 })),
      want: [
        expect.objectContaining({
          reason: 'AutoscalingBoundsInverted',
          field: 'spec.worker.autoscaling.minReplicas',
        }),
      ],
    },
    {
      case: 'maxReplicas above the role bound',
      spec: withLog({ bucket: 'obs-log' }, autoscaling({ maxReplicas: 101 })),
      want: [expect.objectContaining({ reason: 'OutOfRange', field: 'spec.worker.autoscaling.maxReplicas' })],
    },
    {
      case: 'a target at the 429 bound (default one hour)',
      spec: withLog({ bucket: 'obs-log' }, autoscaling({ targetBacklogAgeSeconds: 3600 })),
      want: [
        expect.objectContaining({
          reason: 'AutoscalingTargetAboveBacklogBound',
          field: 'spec.worker.autoscaling.targetBacklogAgeSeconds',
        }),
      ],
    },
    {
      case: 'a target below a lowered 429 bound',
      spec: withLog(
        { bucket: 'obs-log', backlogMaxAgeSeconds: 120 },
        autoscaling({ targetBacklogAgeSeconds: 60 }),
      ),
      want: [],
    },
    {
      case: 'a stabilization window over an hour',
      spec: withLog({ bucket: 'obs-log' }, autoscaling({ scaleDownStabilizationSeconds: 3601 })),
      want: [expect.objectContaining({ field: 'spec.worker.autoscaling.scaleDownStabilizationSeconds' })],
    },
  ])('$case', ({ spec, want }) => {
    expect(validate({ spec: spec as ObservabilityServiceSpec })).toEqual(want);
  });
});
