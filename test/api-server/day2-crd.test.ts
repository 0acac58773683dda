// The real CRD on an API server alone: spec.hibernate is defaulted to false, and spec.backup's
// schedule and retention are checked by the API server (the schedule's shape, a retention naming
// at least one rule, keepLast's bounds, maxAge's grammar), with the CRD's messages.
import { ApiException, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { KEEP_LAST_LIMITS } from '../../server/contract/backup.ts';
import { API_GROUP } from '../../server/contract/retries.ts';
import { type ControlPlane, startControlPlane } from '../fixtures/api-server.ts';
import { minimalService, minimalSpec } from '../fixtures/obsvc-spec.ts';
import { BACKUP_SPEC } from '../unit/operator-walks.ts';

let api: ControlPlane;
let custom: CustomObjectsApi;
const target = {
  group: API_GROUP,
  version: 'v1alpha1',
  namespace: 'default',
  plural: 'observabilityservices',
};

beforeAll(async () => {
  api = await startControlPlane();
  custom = api.kubeconfig.makeApiClient(CustomObjectsApi);
});
afterAll(async () => {
  await api?.stop();
});

const object = (name: string, extra: Partial<ObservabilityServiceSpec>) => ({
  ...target,
  body: minimalService({ ...minimalSpec('Dual'), ...extra }, { name, namespace: target.namespace }),
});
const create = async (name: string, extra: Partial<ObservabilityServiceSpec>) =>
  (await custom.createNamespacedCustomObject(object(name, extra))) as { spec: ObservabilityServiceSpec };
const refusal = async (name: string, extra: Partial<ObservabilityServiceSpec>) => {
  const e = await custom.createNamespacedCustomObject(object(name, extra)).catch((err: unknown) => err);
  expect(e).toBeInstanceOf(ApiException);
  expect((e as ApiException<unknown>).code).toBe(422);
  return JSON.stringify((e as ApiException<unknown>).body);
};
const backup = (b: Partial<NonNullable<ObservabilityServiceSpec['backup']>>) => ({
  backup: { ...BACKUP_SPEC, ...b },
});

describe('day-2 fields on the API server', () => {
  it('defaults spec.hibernate to false and keeps true', async () => {
    expect((await create('awake', {})).spec.hibernate).toBe(false);
    expect((await create('parked', { hibernate: true })).spec.hibernate).toBe(true);
  });

  it('keeps a schedule with its retention', async () => {
    const o = await create(
      'scheduled',
      backup({ schedule: '0 3 * * *', retention: { keepLast: 7, maxAge: '30d' } }),
    );
    expect(o.spec.backup).toMatchObject({ schedule: '0 3 * * *', retention: { keepLast: 7, maxAge: '30d' } });
  });

  it.each<[string, Partial<ObservabilityServiceSpec>, string]>([
    ['a schedule that is not cron-shaped', backup({ schedule: 'daily' }), 'spec.backup.schedule'],
    [
      'a retention without a rule',
      backup({ retention: {} }),
      'spec.backup.retention must set keepLast, maxAge or both',
    ],
    [
      'keepLast below its bound',
      backup({ retention: { keepLast: KEEP_LAST_LIMITS.min - 1 } }),
      'spec.backup.retention.keepLast',
    ],
    [
      'keepLast above its bound',
      backup({ retention: { keepLast: KEEP_LAST_LIMITS.max + 1 } }),
      'spec.backup.retention.keepLast',
    ],
    [
      'a maxAge that is no duration',
      backup({ retention: { maxAge: 'a month' } }),
      'spec.backup.retention.maxAge',
    ],
  ])('refuses %s, naming it', async (_, extra, named) => {
    expect(await refusal(`bad-${_.replace(/[^a-z]+/g, '-').replace(/-$/, '')}`, extra)).toContain(named);
  });
});
