/**
 * The service's mode settings for a migration state (G1: rendered from the observed or recorded
 * target state, never from spec.writeMode alone). Every result is a combination the server's
 * write-mode rules accept; `assertAccepted` checks it against the shared rules module.
 */

import { ENV } from '../../server/contract/env.ts';
import {
  describeViolation,
  findViolations,
  type ModeSettings,
  RELEASE_3_SETTINGS,
  type OtelBehaviour as ServerOtel,
  type WriteMode as ServerWriteMode,
  type SettingKey,
} from '../../server/contract/write-modes.ts';
import { backfillEnabled, otelBehaviourIn } from '../api/effective.ts';
import type { MigrationState, ObservabilityServiceSpec, OtelBehaviour, WriteMode } from '../api/v1alpha1.ts';

export const SERVER_WRITE_MODE: Record<WriteMode, ServerWriteMode> = {
  Legacy: 'legacy',
  Dual: 'dual',
  EventsOnly: 'events_only',
};
export const SERVER_OTEL: Record<OtelBehaviour, ServerOtel> = { DualWrite: 'dual_write', Direct: 'direct' };

export interface SettingsOptions {
  /** Open the backfill gate regardless of the spec (the backfill step Jobs). */
  backfillGate?: boolean;
}

export function modeSettingsFor(
  state: MigrationState,
  spec: ObservabilityServiceSpec,
  o: SettingsOptions = {},
): ModeSettings {
  if (state === 'Release3') return { release: '3', ...RELEASE_3_SETTINGS };
  const v4 = state !== 'Legacy';
  const settings: ModeSettings = {
    release: '4',
    writeMode: SERVER_WRITE_MODE[state],
    nativeOtelBehaviour: SERVER_OTEL[otelBehaviourIn(state, spec)],
    allowPreviewOptIn: state === 'EventsOnly' ? true : (spec.allowPreviewOptIn ?? true),
    // Rule 3: never in Legacy; otherwise as the spec says (the worker does not run it itself).
    enableHistoricBackfill: v4 && (o.backfillGate === true || backfillEnabled(spec)),
    dropPidTidSortingTables: v4 && (spec.backfill?.dropScratchTables ?? false),
  };
  assertAccepted(settings);
  return settings;
}

/** Throws when the server would refuse these settings at start (a bug in the operator). */
export function assertAccepted(s: ModeSettings): void {
  const violations = findViolations(s);
  if (violations.length > 0) {
    const envName = (k: SettingKey) => ENV[k];
    throw new Error(
      `rendered settings refused by the server: ${violations.map((v) => describeViolation(v, envName)).join('; ')}`,
    );
  }
}
