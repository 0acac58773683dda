// The real CRD on an API server alone: spec.hibernate is defaulted to false, and spec.backup's
// schedule and retention are checked by the API server (the schedule's shape, a retention naming
// at least one rule, keepLast's bounds, maxAge's grammar), with the CRD's messages.
import { describe, expect, it } from 'vitest';
import type { ObservabilityServiceSpec } from '../../operator/api/v1alpha1.ts';
import { KEEP_LAST_LIMITS } from '../../server/contract/backup.ts';
import { crdOnApiServer } from '../fixtures/operator/crd-on-api-server.ts';
import { BACKUP_SPEC } from '../unit/operator-walks.ts';

const { create, refusal } = crdOnApiServer();
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
