// The real CRD on an API server alone: spec.blobStorage.ingestionLog bounded from the contract's
// ranges, spec.worker.autoscaling defaulted and refused by its CEL rules with their messages, and the
// log's variables refused in a template's env (the operator renders them).
import { describe, expect, it } from 'vitest';
import { AUTOSCALING_DEFAULTS, type ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { ENV_LIMITS, INGESTION_LOG_ENV, INGESTION_LOG_S3_ENV } from '../../server/contract/env.ts';
import { crdOnApiServer } from '../fixtures/operator/crd-on-api-server.ts';

const { create, refusal } = crdOnApiServer();

const log = { bucket: 'obs-log' };
/** With the log unless `ingestionLog` is null. */
const autoscaled = (autoscaling: Record<string, unknown>, ingestionLog: object | null = log) =>
  ({
    ...(ingestionLog ? { blobStorage: { ingestionLog } } : {}),
    worker: { autoscaling: { enabled: true, maxReplicas: 4, ...autoscaling } },
  }) as Partial<ObservabilityServiceSpec>;

describe('the ingestion log and worker autoscaling on the API server', () => {
  it('accepts an autoscaled worker with the log, filling in the defaults', async () => {
    const created = await create<{
      spec: { worker: { replicas: number; autoscaling: Record<string, unknown> } };
    }>('scaled', autoscaled({}));
    expect(created.spec.worker.autoscaling).toEqual({
      enabled: true,
      maxReplicas: 4,
      ...AUTOSCALING_DEFAULTS,
    });
    expect(created.spec.worker.replicas).toBe(1);
  });

  it.each([
    {
      case: 'autoscaling without the log',
      extra: autoscaled({}, null),
      says: 'spec.worker.autoscaling.enabled needs spec.blobStorage.ingestionLog',
    },
    {
      case: 'minReplicas above maxReplicas',
      extra: autoscaled({ minReplicas: 5 }),
      says: 'spec.worker.autoscaling.minReplicas must be at most spec.worker.autoscaling.maxReplicas',
    },
    {
      case: 'a target at the 429 bound',
      extra: autoscaled({ targetBacklogAgeSeconds: 120 }, { ...log, backlogMaxAgeSeconds: 120 }),
      says: 'spec.worker.autoscaling.targetBacklogAgeSeconds must be below',
    },
    {
      case: 'maxReplicas above the replicas bound',
      extra: autoscaled({ maxReplicas: 101 }),
      says: 'spec.worker.autoscaling.maxReplicas',
    },
    {
      case: 'retention inside the sweeper window',
      extra: {
        blobStorage: {
          ingestionLog: { ...log, retentionHours: ENV_LIMITS.ingestionLogRetentionHours.min - 1 },
        },
      },
      says: 'spec.blobStorage.ingestionLog.retentionHours',
    },
    {
      case: 'half the credentials',
      extra: { blobStorage: { ingestionLog: { ...log, accessKeyIdSecretRef: { name: 's3', key: 'id' } } } },
      says: 'set both accessKeyIdSecretRef and secretAccessKeySecretRef',
    },
    {
      case: "the log's bucket variable in the worker's env",
      extra: { worker: { template: { env: [{ name: INGESTION_LOG_S3_ENV.bucket, value: 'x' }] } } },
      says: `env ${INGESTION_LOG_S3_ENV.bucket} is set by the operator`,
    },
    {
      case: "a log setting in the web's env",
      extra: { web: { template: { env: [{ name: INGESTION_LOG_ENV.waitForStore, value: 'false' }] } } },
      says: `env ${INGESTION_LOG_ENV.waitForStore} is set by the operator`,
    },
  ])('refuses $case with the message', async ({ case: c, extra, says }) => {
    expect(await refusal(c.replace(/[^a-z]+/g, '-').replace(/^-|-$/g, ''), extra)).toContain(says);
  });
});
