/** The reconciler's validation: the CRD's rules (same reasons and messages) plus status-based refusals. */
import { describe, expect, it } from 'vitest';
import { SPEC_RULES } from '../../operator/api/rules.ts';
import type { ObservabilityServiceSpec, ObservabilityServiceStatus } from '../../operator/api/v1alpha1.ts';
import { validate } from '../../operator/validation.ts';

const secretRef = { name: 'observatory-secrets', key: 'url' };
const base: ObservabilityServiceSpec = {
  release: '4',
  image: 'observatory:dev',
  writeMode: 'Dual',
  datastores: {
    postgres: { urlSecretRef: secretRef },
    clickhouse: { urlSecretRef: secretRef, passwordSecretRef: { name: 'ch', key: 'password' } },
    redis: { urlSecretRef: secretRef },
  },
};
const spec = (patch: Partial<ObservabilityServiceSpec>): ObservabilityServiceSpec => ({ ...base, ...patch });
const reasons = (v: ReturnType<typeof validate>) => v.map((x) => `${x.reason}@${x.field}`);

describe('validate: forbidden combinations', () => {
  const table: [string, ObservabilityServiceSpec, string[]][] = [
    ['Dual with defaults', spec({}), []],
    [
      'an owned variable in extra env',
      spec({ worker: { template: { env: [{ name: 'REDIS_URL', value: 'redis://x' }] } } }),
      ['OperatorOwnedEnv@spec.worker.template.env'],
    ],
    ['extra env of its own', spec({ web: { template: { env: [{ name: 'HTTPS_PROXY', value: 'x' }] } } }), []],
    [
      'a budget with both limits',
      spec({ web: { podDisruptionBudget: { minAvailable: 1, maxUnavailable: 1 } } }),
      ['DisruptionBudgetConflict@spec.web.podDisruptionBudget'],
    ],
    ['Legacy with backfill unset', spec({ writeMode: 'Legacy' }), []],
    [
      'backfill tuning within bounds',
      spec({ backfill: { chunkRows: 50_000, throttleMs: 0, concurrency: 4 } }),
      [],
    ],
    ['the widest backfill allowed', spec({ backfill: { chunkRows: 1_250_000, concurrency: 16 } }), []],
    [
      'backfill chunks of 0 rows',
      spec({ backfill: { chunkRows: 0 } }),
      ['OutOfRange@spec.backfill.chunkRows'],
    ],
    [
      'a negative throttle and a fractional concurrency',
      spec({ backfill: { throttleMs: -1, concurrency: 1.5 } }),
      ['OutOfRange@spec.backfill.throttleMs', 'OutOfRange@spec.backfill.concurrency'],
    ],
    [
      'concurrency above 16',
      spec({ backfill: { concurrency: 17 } }),
      ['OutOfRange@spec.backfill.concurrency'],
    ],
    [
      'more rows in flight than a node holds',
      spec({ backfill: { chunkRows: 2_000_000, concurrency: 16 } }),
      ['BackfillTooWide@spec.backfill.concurrency'],
    ],
    ['propagation chunks of one row', spec({ propagation: { chunkRows: 1 } }), []],
    ['the largest propagation chunks', spec({ propagation: { chunkRows: 100_000_000 } }), []],
    [
      'propagation chunks of 0 rows',
      spec({ propagation: { chunkRows: 0 } }),
      ['OutOfRange@spec.propagation.chunkRows'],
    ],
    [
      'propagation chunks above the contract maximum, fractional',
      spec({ propagation: { chunkRows: 100_000_000.5 } }),
      ['OutOfRange@spec.propagation.chunkRows'],
    ],
    ['a Job TTL of one hour', spec({ jobs: { ttlSecondsAfterFinished: 3600 } }), []],
    [
      'a Job TTL too short to read the result',
      spec({ jobs: { ttlSecondsAfterFinished: 10 } }),
      ['OutOfRange@spec.jobs.ttlSecondsAfterFinished'],
    ],
    ['EventsOnly with defaults', spec({ writeMode: 'EventsOnly' }), []],
    ['release 3 with writeMode unset', spec({ release: '3', writeMode: undefined }), []],
    ['release 3 with Legacy', spec({ release: '3', writeMode: 'Legacy' }), []],
    [
      'EventsOnly with DualWrite',
      spec({ writeMode: 'EventsOnly', nativeOtelBehaviour: 'DualWrite' }),
      ['EventsOnlyRequiresDirectOtel@spec.nativeOtelBehaviour'],
    ],
    [
      'EventsOnly with preview opt-in off',
      spec({ writeMode: 'EventsOnly', allowPreviewOptIn: false }),
      ['EventsOnlyRequiresPreviewOptIn@spec.allowPreviewOptIn'],
    ],
    [
      'Legacy with the backfill enabled',
      spec({ writeMode: 'Legacy', backfill: { enabled: true } }),
      ['LegacyForbidsBackfill@spec.backfill.enabled'],
    ],
    [
      'Legacy with Direct (the spec default; Legacy writes no events table)',
      spec({ writeMode: 'Legacy', nativeOtelBehaviour: 'Direct' }),
      [],
    ],
    ['release 3 with Dual', spec({ release: '3', writeMode: 'Dual' }), ['Release3OnlyLegacy@spec.writeMode']],
    ['release 4 without writeMode', spec({ writeMode: undefined }), ['WriteModeRequired@spec.writeMode']],
    [
      'cleanup before EventsOnly',
      spec({ cleanup: { truncateLegacyTables: true } }),
      ['CleanupRequiresEventsOnly@spec.cleanup.truncateLegacyTables'],
    ],
    [
      'several at once',
      spec({ writeMode: 'EventsOnly', nativeOtelBehaviour: 'DualWrite', allowPreviewOptIn: false }),
      [
        'EventsOnlyRequiresDirectOtel@spec.nativeOtelBehaviour',
        'EventsOnlyRequiresPreviewOptIn@spec.allowPreviewOptIn',
      ],
    ],
  ];
  it.each(table)('%s', (_name, s, expected) => {
    expect(reasons(validate({ spec: s }))).toEqual(expected);
  });

  it('uses the CRD rule messages, which name the field and never a value', () => {
    const v = validate({ spec: spec({ writeMode: 'EventsOnly', nativeOtelBehaviour: 'DualWrite' }) });
    const rule = SPEC_RULES.find((r) => r.reason === 'EventsOnlyRequiresDirectOtel')!;
    expect(v[0]!.message).toBe(rule.message);
    for (const x of validate({ spec: spec({ release: '3', cleanup: { truncateLegacyTables: true } }) })) {
      expect(x.message).not.toContain('observatory-secrets');
      expect(x.message).not.toContain('observatory:dev');
    }
  });

  it('refuses a name too long for the children', () => {
    expect(reasons(validate({ meta: { name: 'x'.repeat(57) }, spec: spec({}) }))).toEqual([
      'NameTooLong@metadata.name',
    ]);
  });
});

describe('validate: transitions and the point of no return', () => {
  const eo = spec({ writeMode: 'EventsOnly' });
  it.each([
    ['EventsOnly -> Dual', spec({}), ['EventsOnlyIsFinal@spec.writeMode']],
    [
      'EventsOnly -> release 3',
      spec({ release: '3', writeMode: undefined }),
      ['EventsOnlyIsFinal@spec.writeMode', 'NoRollbackAfterEventsOnly@spec.release'],
    ],
    ['EventsOnly -> EventsOnly', eo, []],
  ] as const)('oldSpec %s', (_n, next, expected) => {
    expect(reasons(validate({ spec: next, oldSpec: eo }))).toEqual(expected);
  });

  const committed: ObservabilityServiceStatus[] = [
    { state: 'EventsOnly' },
    { state: 'Dual', target: { state: 'EventsOnly', since: '2026-01-01T00:00:00Z', image: 'x' } },
  ];
  it.each(committed)('status %o refuses every way back', (status) => {
    expect(reasons(validate({ spec: spec({}), status }))).toEqual(['EventsOnlyIsFinal@spec.writeMode']);
    expect(reasons(validate({ spec: spec({ release: '3', writeMode: undefined }), status }))).toEqual([
      'NoRollbackAfterEventsOnly@spec.release',
    ]);
    expect(validate({ spec: eo, status })).toEqual([]);
  });

  it('refuses Legacy after Dual once the backfill started, allows it before', () => {
    const legacy = spec({ writeMode: 'Legacy' });
    expect(validate({ spec: legacy, status: { state: 'Dual' } })).toEqual([]);
    const started = {
      state: 'Dual' as const,
      backfill: { completedSteps: 1, totalSteps: 4, progress: '1/4' },
    };
    expect(reasons(validate({ spec: legacy, status: started }))).toEqual([
      'NoLegacyAfterBackfill@spec.writeMode',
    ]);
  });

  it('allows rollback to release 3 from Legacy and Dual', () => {
    const r3 = spec({ release: '3', writeMode: undefined });
    expect(validate({ spec: r3, status: { state: 'Dual' } })).toEqual([]);
    expect(validate({ spec: r3, status: { state: 'Legacy' } })).toEqual([]);
  });
});
