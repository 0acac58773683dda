/**
 * The service's mode settings for a migration state (G1: rendered from the observed or recorded
 * target state, never from spec.writeMode alone, with the settings approved for that state).
 * Every result is a combination the server's write-mode rules accept; `assertAccepted` checks it
 * against the shared rules module.
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
import { backfillEnabled, desiredState, otelBehaviourIn } from '../api/effective.ts';
import type {
  MigrationState,
  ObservabilityServiceSpec,
  OtelBehaviour,
  RecordedSettings,
  WriteMode,
} from '../api/v1alpha1.ts';

export const SERVER_WRITE_MODE: Record<WriteMode, ServerWriteMode> = {
  Legacy: 'legacy',
  Dual: 'dual',
  EventsOnly: 'events_only',
};
export const SERVER_OTEL: Record<OtelBehaviour, ServerOtel> = { DualWrite: 'dual_write', Direct: 'direct' };

export interface SettingsOptions {
  /** Open the backfill gate regardless of the spec (the backfill step Jobs). */
  backfillGate?: boolean;
  /**
   * Open the scratch-table gate regardless of the record (the Job of backfill step 5, which the
   * chain runs only when the spec asks for it).
   */
  dropGate?: boolean;
}

/**
 * What the spec asks `state` to run with. spec.nativeOtelBehaviour is stated for the write mode
 * the spec asks: a state on the way there (Dual on the way to EventsOnly) takes its own default.
 */
export function settingsFromSpec(state: WriteMode, spec: ObservabilityServiceSpec): RecordedSettings {
  const asked = desiredState(spec) === state;
  const { nativeOtelBehaviour: _, ...withoutOtel } = spec;
  return {
    writeMode: state,
    nativeOtelBehaviour: otelBehaviourIn(state, asked ? spec : withoutOtel),
    allowPreviewOptIn: state === 'EventsOnly' ? true : (spec.allowPreviewOptIn ?? true),
    // Rule 3: never in Legacy; otherwise as the spec says (the worker does not run it itself).
    historicBackfill: state !== 'Legacy' && backfillEnabled(spec),
    dropScratchTables: state !== 'Legacy' && (spec.backfill?.dropScratchTables ?? false),
  };
}

/**
 * The settings `state` runs with: the spec's while the spec asks for that state; otherwise the
 * ones recorded when the state was entered or approved (status.settings, status.target.settings),
 * so a change requested for another state (a cutover not yet approved) reaches no Pod. Without a
 * record (a status written before records existed) what the spec asks of that state.
 */
export function approvedSettings(
  state: WriteMode,
  spec: ObservabilityServiceSpec,
  recorded: readonly RecordedSettings[] = [],
): RecordedSettings {
  const record = desiredState(spec) === state ? undefined : recorded.find((r) => r.writeMode === state);
  return record ?? settingsFromSpec(state, spec);
}

export function modeSettingsFor(
  state: MigrationState,
  spec: ObservabilityServiceSpec,
  o: SettingsOptions = {},
  recorded: readonly RecordedSettings[] = [],
): ModeSettings {
  if (state === 'Release3') return { release: '3', ...RELEASE_3_SETTINGS };
  const r = approvedSettings(state, spec, recorded);
  const settings: ModeSettings = {
    release: '4',
    writeMode: SERVER_WRITE_MODE[state],
    nativeOtelBehaviour: SERVER_OTEL[r.nativeOtelBehaviour],
    allowPreviewOptIn: r.allowPreviewOptIn,
    enableHistoricBackfill: state !== 'Legacy' && (o.backfillGate === true || r.historicBackfill),
    dropPidTidSortingTables: state !== 'Legacy' && (o.dropGate === true || r.dropScratchTables),
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
