/**
 * Reads the service configuration from the environment. Every problem is collected and reported
 * as one line naming the variables and the allowed values; nothing starts on a bad configuration.
 */
import {
  describeViolation,
  ENV,
  findViolations,
  type ModeSettings,
  OTEL_BEHAVIOURS,
  RELEASE_3_SETTINGS,
  RELEASES,
  type SettingKey,
  V4_DEFAULTS,
  WRITE_MODES,
} from './write-modes.ts';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface ClickHouseSettings {
  url: string;
  user: string;
  password: string;
  database: string;
  clusterEnabled: boolean;
  clusterName: string;
  useLightweightUpdate: boolean;
}

export interface ServiceConfig {
  mode: ModeSettings;
  propagationStuckThresholdMinutes: number;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  clickhouse: ClickHouseSettings;
  host: string;
  port: number | undefined;
  /** Concurrent write requests a web process serves before answering 429. */
  maxInFlightWrites: number;
}

type Env = Record<string, string | undefined>;

const envName = (k: SettingKey): string => ENV[k];

class Reader {
  readonly problems: string[] = [];
  private readonly env: Env;
  constructor(env: Env) {
    this.env = env;
  }

  raw(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    if ((allowed as readonly string[]).includes(v)) return v as T;
    this.problems.push(`${name}=${v} is not one of ${allowed.join('|')}`);
    return fallback;
  }

  bool(name: string, fallback: boolean): boolean {
    const v = this.raw(name)?.toLowerCase();
    if (v === undefined) return fallback;
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    this.problems.push(`${name}=${v} is not one of true|false`);
    return fallback;
  }

  positiveInt(name: string, fallback: number | undefined, max = Number.MAX_SAFE_INTEGER): number | undefined {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (Number.isInteger(n) && n > 0 && n <= max) return n;
    this.problems.push(`${name}=${v} is not an integer between 1 and ${max}`);
    return fallback;
  }
}

/** Mode settings alone: what the write-mode rules need. */
export function readModeSettings(env: Env, r = new Reader(env)): ModeSettings {
  const release = r.oneOf(ENV.release, RELEASES, '4');
  const defaults = release === '3' ? RELEASE_3_SETTINGS : V4_DEFAULTS;
  const settings: ModeSettings = {
    release,
    writeMode: r.oneOf(ENV.writeMode, WRITE_MODES, defaults.writeMode),
    nativeOtelBehaviour: r.oneOf(ENV.nativeOtelBehaviour, OTEL_BEHAVIOURS, defaults.nativeOtelBehaviour),
    allowPreviewOptIn: r.bool(ENV.allowPreviewOptIn, defaults.allowPreviewOptIn),
    enableHistoricBackfill: r.bool(ENV.enableHistoricBackfill, defaults.enableHistoricBackfill),
    dropPidTidSortingTables: r.bool(ENV.dropPidTidSortingTables, defaults.dropPidTidSortingTables),
  };
  if (r.problems.length === 0) {
    for (const v of findViolations(settings)) r.problems.push(describeViolation(v, envName));
  }
  return settings;
}

export interface LoadOptions {
  /** Variables that must be present for this role (e.g. DATABASE_URL for web). */
  require?: readonly ('DATABASE_URL' | 'CLICKHOUSE_URL' | 'REDIS_URL')[];
}

/** Parses and validates the whole configuration; throws ConfigError with one line on any problem. */
export function loadConfig(env: Env, opts: LoadOptions = {}): ServiceConfig {
  const r = new Reader(env);
  const mode = readModeSettings(env, r);
  const threshold = r.positiveInt(ENV.propagationStuckThresholdMinutes, 15, 7 * 24 * 60) ?? 15;
  const clickhouse: ClickHouseSettings = {
    url: r.raw('CLICKHOUSE_URL') ?? '',
    user: r.raw('CLICKHOUSE_USER') ?? 'default',
    password: env['CLICKHOUSE_PASSWORD'] ?? '',
    database: r.raw('CLICKHOUSE_DB') ?? 'default',
    clusterEnabled: r.bool(ENV.columnarClusterEnabled, false),
    clusterName: r.raw('COLUMNAR_CLUSTER_NAME') ?? 'default',
    useLightweightUpdate: r.bool(ENV.columnarUseLightweightUpdate, false),
  };
  if (clickhouse.url && !/^(https?|chdb):\/\//.test(clickhouse.url)) {
    r.problems.push('CLICKHOUSE_URL must start with http://, https:// or chdb://');
  }
  const port = r.positiveInt('PORT', undefined, 65535);
  const maxInFlightWrites = r.positiveInt('SERVICE_INGESTION_MAX_IN_FLIGHT', 64, 10_000) ?? 64;
  for (const name of opts.require ?? []) {
    if (!r.raw(name)) r.problems.push(`${name} is required`);
  }
  if (r.problems.length > 0) {
    throw new ConfigError(`invalid configuration: ${r.problems.join('; ')}`);
  }
  return {
    mode,
    propagationStuckThresholdMinutes: threshold,
    databaseUrl: r.raw('DATABASE_URL'),
    redisUrl: r.raw('REDIS_URL'),
    clickhouse,
    host: r.raw('HOST') ?? '0.0.0.0',
    port,
    maxInFlightWrites,
  };
}
