/** `kubectl observatory plan`'s pending change: what the spec asks that no Pod runs yet. */
import { describe, expect, it } from 'vitest';
import type { ObservabilityService, ObservabilityServiceStatus } from '../../operator/api/v1alpha1.ts';
import { pendingChange, renderPlan } from '../../operator/kubectl/plan-view.ts';
import { minimalService, minimalSpec } from '../fixtures/obsvc-spec.ts';
import { reconciledPlan } from '../fixtures/operator/plan-view.ts';
import { DUAL_SETTINGS } from '../fixtures/operator/planner-world.ts';

const object = (spec: Record<string, unknown>, status: ObservabilityServiceStatus): ObservabilityService =>
  minimalService(
    { ...minimalSpec('Dual'), upgrade: { backupConfirmed: true }, ...spec },
    { name: 'demo', namespace: 'obs', uid: 'u', generation: 3 },
    status,
  );

describe('pendingChange', () => {
  const dual: ObservabilityServiceStatus = {
    state: 'Dual',
    deployedImage: 'observatory:dev',
    settings: DUAL_SETTINGS,
    target: {
      state: 'Dual',
      since: '2026-11-26T12:00:00.000Z',
      image: 'observatory:dev',
      settings: DUAL_SETTINGS,
    },
  };

  it('the requested cutover: each variable that changes, and what approving does', () => {
    const p = pendingChange(
      object(
        { writeMode: 'EventsOnly', nativeOtelBehaviour: 'Direct', cutover: { approval: 'Manual' } },
        dual,
      ),
    );
    expect(p).toEqual({
      from: 'Dual',
      to: 'EventsOnly',
      changes: [
        'SERVICE_MIGRATION_V4_WRITE_MODE: dual -> events_only',
        'SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: dual_write -> direct',
      ],
      onApproval: expect.stringMatching(
        /^approving \(kubectl observatory approve demo\).*Dual -> EventsOnly/,
      ),
    });
    const text = renderPlan(reconciledPlan({ pending: p! }));
    expect(text).toContain('Pending: Dual -> EventsOnly, not rendered into any Pod yet');
    expect(text).toContain('  SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: dual_write -> direct');
  });

  it.each<[string, Record<string, unknown>, ObservabilityServiceStatus]>([
    ['the spec asks the observed state', { writeMode: 'Dual' }, dual],
    [
      'the pass is already recorded (approved)',
      { writeMode: 'EventsOnly', nativeOtelBehaviour: 'Direct' },
      {
        ...dual,
        target: { state: 'EventsOnly', since: '2026-11-26T13:00:00.000Z', image: 'observatory:dev' },
      },
    ],
    ['nothing observed yet', { writeMode: 'Dual' }, {}],
  ])('nothing pending when %s', (_, spec, status) => {
    expect(pendingChange(object(spec, status))).toBeUndefined();
  });
});
