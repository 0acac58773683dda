/**
 * The write-mode rules of the version 4 migration: which combinations of settings are allowed,
 * which tables each mode writes and which endpoints each mode serves. Part of the server's
 * published contract: the server and the operator both import it, so there is exactly one
 * statement of these rules. Pure: no I/O.
 */

export const WRITE_MODES = ['legacy', 'dual', 'events_only'] as const;
export type WriteMode = (typeof WRITE_MODES)[number];

export const OTEL_BEHAVIOURS = ['dual_write', 'direct'] as const;
export type OtelBehaviour = (typeof OTEL_BEHAVIOURS)[number];

export const RELEASES = ['3', '4'] as const;
export type Release = (typeof RELEASES)[number];

/** The settings that decide the write behaviour, after parsing. */
export interface ModeSettings {
  release: Release;
  writeMode: WriteMode;
  nativeOtelBehaviour: OtelBehaviour;
  allowPreviewOptIn: boolean;
  enableHistoricBackfill: boolean;
  dropPidTidSortingTables: boolean;
}

/** Version 4 defaults: the target state of the migration. */
export const V4_DEFAULTS: Omit<ModeSettings, 'release'> = {
  writeMode: 'events_only',
  nativeOtelBehaviour: 'direct',
  allowPreviewOptIn: true,
  enableHistoricBackfill: true,
  dropPidTidSortingTables: false,
};

/** Settings a release 3 build behaves as: version 3 knows only the legacy tables. */
export const RELEASE_3_SETTINGS: Omit<ModeSettings, 'release'> = {
  writeMode: 'legacy',
  nativeOtelBehaviour: 'dual_write',
  allowPreviewOptIn: false,
  enableHistoricBackfill: false,
  dropPidTidSortingTables: false,
};

export type SettingKey = keyof Omit<ModeSettings, 'release'> | 'release';

export interface Violation {
  /** The settings involved, as keys of ModeSettings (callers map them to env vars or spec fields). */
  settings: SettingKey[];
  /** Stable machine-readable reason. */
  reason: string;
  /** What is required, phrased with `{name}` placeholders for the settings. */
  rule: string;
}

/**
 * Every forbidden combination of the spec (Rule 2, Rule 3, the reference's boot validation).
 * Returns all violations so one message can name all of them.
 */
export function findViolations(s: ModeSettings): Violation[] {
  const out: Violation[] = [];
  if (s.release === '3') {
    if (s.writeMode !== 'legacy') {
      out.push({
        settings: ['release', 'writeMode'],
        reason: 'Release3OnlyLegacy',
        rule: '{release}=3 supports only {writeMode}=legacy',
      });
    }
    return out;
  }
  if (s.writeMode === 'events_only' && s.nativeOtelBehaviour !== 'direct') {
    out.push({
      settings: ['writeMode', 'nativeOtelBehaviour'],
      reason: 'EventsOnlyRequiresDirectOtel',
      rule: '{writeMode}=events_only requires {nativeOtelBehaviour}=direct',
    });
  }
  if (s.writeMode === 'events_only' && !s.allowPreviewOptIn) {
    out.push({
      settings: ['writeMode', 'allowPreviewOptIn'],
      reason: 'EventsOnlyRequiresPreviewOptIn',
      rule: '{writeMode}=events_only requires {allowPreviewOptIn}=true',
    });
  }
  if (s.writeMode === 'legacy' && s.enableHistoricBackfill) {
    out.push({
      settings: ['writeMode', 'enableHistoricBackfill'],
      reason: 'LegacyForbidsBackfill',
      rule: '{writeMode}=legacy requires {enableHistoricBackfill}=false (the backfill runs once and must start only after dual write is active)',
    });
  }
  return out;
}

/** Renders a violation's rule with the given names for the settings (env vars, spec paths). */
export function describeViolation(v: Violation, nameOf: (k: SettingKey) => string): string {
  return v.rule.replace(/\{(\w+)\}/g, (_, k: SettingKey) => nameOf(k));
}

/** What a mode writes and serves. */
export interface ModeBehaviour {
  /** Ingestion writes `traces` and `observations`. */
  writesLegacyTables: boolean;
  /** Ingestion writes `events_full` (directly or through staging and propagation). */
  writesEventsTables: boolean;
  /** Batch ingestion and dual-path OTLP also stage observations for propagation. */
  writesStaging: boolean;
  /** The propagation job runs (to propagate, and in events_only to drain what is left). */
  runsPropagation: boolean;
  /** Deprecated endpoints (legacy writes and reads) answer; otherwise 404. */
  servesLegacyEndpoints: boolean;
  /** Batch ingestion accepts only score-create. */
  batchAcceptsOnlyScores: boolean;
  /** Version 4 read APIs (observations v2, experiments) are served. */
  servesV4Reads: boolean;
  /** The historic backfill chain may run (Rule 3). */
  backfillMayRun: boolean;
}

export function behaviourOf(s: ModeSettings): ModeBehaviour {
  const v4 = s.release === '4';
  const mode = v4 ? s.writeMode : 'legacy';
  return {
    writesLegacyTables: mode !== 'events_only',
    writesEventsTables: mode !== 'legacy',
    writesStaging: mode === 'dual',
    runsPropagation: mode !== 'legacy',
    servesLegacyEndpoints: mode !== 'events_only',
    batchAcceptsOnlyScores: mode === 'events_only',
    servesV4Reads: v4 && (mode === 'events_only' || (mode === 'dual' && s.allowPreviewOptIn)),
    backfillMayRun: v4 && mode !== 'legacy' && s.enableHistoricBackfill,
  };
}

/** The tables one write lands in. */
export interface WriteTargets {
  /** `traces` / `observations` (scores always go to `scores`). */
  legacy: boolean;
  /** `observations_batch_staging`, for the propagation job to carry into `events_full`. */
  staging: boolean;
  /** `events_full` directly (the materialized view fills `events_core`). */
  events: boolean;
}

/** Targets of a trace or observation sent through batch ingestion or a legacy endpoint. */
export function batchTargets(s: ModeSettings): WriteTargets {
  const b = behaviourOf(s);
  return { legacy: b.writesLegacyTables, staging: b.writesStaging, events: false };
}

/**
 * Targets of an OTLP export. `legacy` writes only the legacy tables whatever the producer says;
 * `events_only` writes only `events_full`; `dual` always writes the legacy tables and adds either
 * a direct write (behaviour `direct`, or a real-time producer, one that propagates client-side:
 * server/features/ingestion/sdk-versions.ts) or staging.
 */
export function otelTargets(s: ModeSettings, producerIsRealTime: boolean): WriteTargets {
  const b = behaviourOf(s);
  if (!b.writesEventsTables) return { legacy: true, staging: false, events: false };
  if (!b.writesLegacyTables) return { legacy: false, staging: false, events: true };
  const direct = s.nativeOtelBehaviour === 'direct' || producerIsRealTime;
  return { legacy: true, staging: !direct, events: direct };
}
