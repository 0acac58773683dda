/**
 * Reads the service configuration from the environment. Every problem is collected and reported
 * as one line naming the variables and the allowed values; nothing starts on a bad configuration.
 * The one module of the server that reads `process.env` (each role's entry calls it once).
 */
import { isIP } from 'node:net';
import { BACKUP_S3_ENV } from '../contract/backup.ts';
import {
  ALERT_ENV,
  ConfigError,
  ENV,
  ENV_DEFAULTS,
  ENV_LIMITS,
  type Env,
  EnvReader,
  LIFECYCLE_ENV,
  LLM_ENV,
  LOG_LEVELS,
  type LogLevel,
  MAX_PROPAGATION_STUCK_THRESHOLD_MINUTES,
  readModeSettings,
  S3_ENV,
} from '../contract/env.ts';
import { type OperatorObject, parseOperatorObject } from '../contract/retries.ts';
import type { ModeSettings } from '../contract/write-modes.ts';
import { readTimeoutOverrides, type TimeoutOverrides } from './analytics-timeouts.ts';
import { type AuthSettings, readAuthSettings } from './auth.ts';
import { type BackfillTuning, readBackfillTuning } from './backfill-tuning.ts';
import { readS3Settings, type S3Settings } from './blob-storage.ts';

export { ConfigError };

export interface ClickHouseSettings {
  url: string;
  user: string;
  password: string;
  database: string;
  clusterEnabled: boolean;
  clusterName: string;
  useLightweightUpdate: boolean;
}

export interface MediaSettings {
  /** The bucket media is uploaded to; absent: the media API answers that it is not configured. */
  s3: S3Settings | undefined;
  maxContentLength: number;
  downloadUrlExpirySeconds: number;
}

export interface ServiceConfig {
  mode: ModeSettings;
  propagationStuckThresholdMinutes: number;
  /** Seconds between propagation runs and how long a staged row waits for late writes. */
  propagationIntervalSeconds: number;
  propagationGraceSeconds: number;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  clickhouse: ClickHouseSettings;
  host: string;
  port: number | undefined;
  /** The web's `/metrics` listener; undefined: `/metrics` is served on `port`. */
  metricsPort: number | undefined;
  /** Concurrent write requests a web process serves before answering 429. */
  maxInFlightWrites: number;
  media: MediaSettings;
  /** The bucket scheduled exports write to; absent: exports cannot run. */
  exportStorage: S3Settings | undefined;
  exportIntervalSeconds: number;
  /** Where `observatory backup` writes and `observatory restore` reads (required by those roles). */
  backupStorage: S3Settings | undefined;
  /** The ObservabilityService running this process, when an operator runs it. */
  operatorObject: OperatorObject | undefined;
  /** Sign-in, sessions and the proxies trusted for the client's address and scheme. */
  auth: AuthSettings;
  llm: LlmSettings;
  logLevel: LogLevel;
  /** Seconds between SIGTERM and closing listeners and clients. */
  shutdownDrainSeconds: number;
  /** Schema migrations are left to the operator's Jobs instead of applied at start. */
  autoMigrationDisabled: boolean;
  /** The worker runs the backfill chain itself (false: the operator's Jobs run it). */
  backgroundMigrationsInWorker: boolean;
  /** The process's identity in locks and leases (the Pod name in a cluster). */
  podName: string | undefined;
  /** The backfill tuning variables that are set (applied to each step's row as it starts). */
  backfill: BackfillTuning;
  /** Overrides of the analytics statement bounds of this process's role. */
  analyticsTimeouts: TimeoutOverrides;
  alerts: AlertSettings;
}

export interface AlertSettings {
  tickSeconds: number;
  retryBaseSeconds: number;
}

export interface LlmSettings {
  /** The key that encrypts connection secrets; absent: no connection may be stored. */
  encryptionKey: Buffer | undefined;
  /** Host names and addresses allowed although private (SSRF exceptions). */
  whitelistedHosts: string[];
  whitelistedIps: string[];
}

export interface LoadOptions {
  /** Variables that must be present for this role (e.g. DATABASE_URL for web). */
  require?: readonly ('DATABASE_URL' | 'CLICKHOUSE_URL' | 'REDIS_URL' | typeof BACKUP_S3_ENV.bucket)[];
}

/** Parses and validates the whole configuration; throws ConfigError with one line on any problem. */
export function loadConfig(env: Env, opts: LoadOptions = {}): ServiceConfig {
  const r = new EnvReader(env);
  const mode = readModeSettings(env, r);
  const threshold =
    r.positiveInt(
      ENV.propagationStuckThresholdMinutes,
      ENV_DEFAULTS.propagationStuckThresholdMinutes,
      MAX_PROPAGATION_STUCK_THRESHOLD_MINUTES,
    ) ?? ENV_DEFAULTS.propagationStuckThresholdMinutes;
  const clickhouse: ClickHouseSettings = {
    url: r.raw(ENV.clickhouseUrl) ?? '',
    user: r.raw(ENV.clickhouseUser) ?? ENV_DEFAULTS.clickhouseUser,
    password: env[ENV.clickhousePassword] ?? '',
    database: r.raw(ENV.clickhouseDb) ?? ENV_DEFAULTS.clickhouseDb,
    clusterEnabled: r.bool(ENV.columnarClusterEnabled, ENV_DEFAULTS.columnarClusterEnabled),
    clusterName: r.raw(ENV.columnarClusterName) ?? ENV_DEFAULTS.columnarClusterName,
    useLightweightUpdate: r.bool(ENV.columnarUseLightweightUpdate, ENV_DEFAULTS.columnarUseLightweightUpdate),
  };
  if (clickhouse.url && !/^(https?|chdb):\/\//.test(clickhouse.url)) {
    r.problems.push(`${ENV.clickhouseUrl} must start with http://, https:// or chdb://`);
  }
  const port = r.positiveInt(ENV.port, undefined, 65535);
  const metricsPort = r.positiveInt(ENV.metricsPort, undefined, 65535);
  if (metricsPort !== undefined && metricsPort === port)
    r.problems.push(`${ENV.metricsPort} must differ from ${ENV.port}`);
  const maxInFlightWrites =
    r.intIn(ENV.maxInFlightWrites, ENV_DEFAULTS.maxInFlightWrites, ENV_LIMITS.maxInFlightWrites) ??
    ENV_DEFAULTS.maxInFlightWrites;
  const propagationIntervalSeconds =
    r.intIn(
      ENV.propagationIntervalSeconds,
      ENV_DEFAULTS.propagationIntervalSeconds,
      ENV_LIMITS.propagationIntervalSeconds,
    ) ?? ENV_DEFAULTS.propagationIntervalSeconds;
  const propagationGraceSeconds =
    r.intIn(
      ENV.propagationGraceSeconds,
      ENV_DEFAULTS.propagationGraceSeconds,
      ENV_LIMITS.propagationGraceSeconds,
    ) ?? ENV_DEFAULTS.propagationGraceSeconds;
  const logLevel = r.oneOf(ENV.logLevel, LOG_LEVELS, ENV_DEFAULTS.logLevel);
  const media: MediaSettings = {
    s3: readS3Settings(r, S3_ENV.media),
    maxContentLength:
      r.intIn(
        ENV.mediaMaxContentLength,
        ENV_DEFAULTS.mediaMaxContentLength,
        ENV_LIMITS.mediaMaxContentLength,
      ) ?? ENV_DEFAULTS.mediaMaxContentLength,
    downloadUrlExpirySeconds:
      r.intIn(
        ENV.mediaDownloadUrlExpirySeconds,
        ENV_DEFAULTS.mediaDownloadUrlExpirySeconds,
        ENV_LIMITS.mediaDownloadUrlExpirySeconds,
      ) ?? ENV_DEFAULTS.mediaDownloadUrlExpirySeconds,
  };
  const exportStorage = readS3Settings(r, S3_ENV.export);
  const backupStorage = readS3Settings(r, BACKUP_S3_ENV);
  const exportIntervalSeconds =
    r.intIn(
      ENV.exportIntervalSeconds,
      ENV_DEFAULTS.exportIntervalSeconds,
      ENV_LIMITS.exportIntervalSeconds,
    ) ?? ENV_DEFAULTS.exportIntervalSeconds;
  const operatorValue = r.raw(ENV.operatorObject);
  const operatorObject = operatorValue === undefined ? undefined : parseOperatorObject(operatorValue);
  if (operatorValue !== undefined && !operatorObject)
    r.problems.push(`${ENV.operatorObject} must be <namespace>/<name> of an ObservabilityService`);
  const auth = readAuthSettings(r);
  const llm = readLlmSettings(r);
  const shutdownDrainSeconds =
    r.intIn(
      LIFECYCLE_ENV.shutdownDrainSeconds,
      ENV_DEFAULTS.shutdownDrainSeconds,
      ENV_LIMITS.shutdownDrainSeconds,
    ) ?? ENV_DEFAULTS.shutdownDrainSeconds;
  const autoMigrationDisabled = r.bool(ENV.autoMigrationDisabled, ENV_DEFAULTS.autoMigrationDisabled);
  const backgroundMigrationsInWorker = r.bool(
    ENV.backgroundMigrationsInWorker,
    ENV_DEFAULTS.backgroundMigrationsInWorker,
  );
  const backfill = readBackfillTuning(r);
  const analyticsTimeouts = readTimeoutOverrides(r);
  const alerts: AlertSettings = {
    tickSeconds:
      r.intIn(ALERT_ENV.tickSeconds, ENV_DEFAULTS.alertTickSeconds, ENV_LIMITS.alertTickSeconds) ??
      ENV_DEFAULTS.alertTickSeconds,
    retryBaseSeconds:
      r.intIn(
        ALERT_ENV.retryBaseSeconds,
        ENV_DEFAULTS.alertRetryBaseSeconds,
        ENV_LIMITS.alertRetryBaseSeconds,
      ) ?? ENV_DEFAULTS.alertRetryBaseSeconds,
  };
  for (const name of opts.require ?? []) {
    if (!r.raw(name)) r.problems.push(`${name} is required`);
  }
  if (r.problems.length > 0) {
    throw new ConfigError(`invalid configuration: ${r.problems.join('; ')}`);
  }
  return {
    mode,
    propagationStuckThresholdMinutes: threshold,
    propagationIntervalSeconds,
    propagationGraceSeconds,
    databaseUrl: r.raw(ENV.databaseUrl),
    redisUrl: r.raw(ENV.redisUrl),
    clickhouse,
    host: r.raw(ENV.host) ?? ENV_DEFAULTS.host,
    port,
    metricsPort,
    maxInFlightWrites,
    media,
    exportStorage,
    exportIntervalSeconds,
    backupStorage,
    operatorObject,
    auth,
    llm,
    logLevel,
    shutdownDrainSeconds,
    autoMigrationDisabled,
    backgroundMigrationsInWorker,
    podName: r.raw(ENV.podName),
    backfill,
    analyticsTimeouts,
    alerts,
  };
}

/** The datastores each role of the CLI needs named (`dev` brings its own embedded ones). */
export const ROLE_REQUIRES = {
  web: ['DATABASE_URL', 'CLICKHOUSE_URL'],
  worker: ['DATABASE_URL', 'CLICKHOUSE_URL', 'REDIS_URL'],
  migrate: ['DATABASE_URL', 'CLICKHOUSE_URL'],
  backfill: ['DATABASE_URL', 'CLICKHOUSE_URL'],
  preflight: ['DATABASE_URL', 'CLICKHOUSE_URL'],
  cleanup: ['DATABASE_URL', 'CLICKHOUSE_URL'],
  backup: ['DATABASE_URL', 'CLICKHOUSE_URL', BACKUP_S3_ENV.bucket],
  restore: ['DATABASE_URL', 'CLICKHOUSE_URL', BACKUP_S3_ENV.bucket],
  producers: ['DATABASE_URL'],
  models: ['DATABASE_URL'],
  'create-project': ['DATABASE_URL'],
  'create-user': ['DATABASE_URL'],
  dev: [],
} as const satisfies Record<string, LoadOptions['require']>;
export type ServerRole = keyof typeof ROLE_REQUIRES;

/** One role's configuration from an environment. */
export const loadRoleConfig = (role: ServerRole, env: Env): ServiceConfig =>
  loadConfig(env, { require: ROLE_REQUIRES[role] });

export interface ProcessConfigOptions {
  /** Values used where the process environment leaves a variable unset (e.g. `dev` binds 127.0.0.1). */
  defaults?: Env;
  /** Values that replace the process environment's (e.g. `dev`'s embedded analytics store). */
  overrides?: Env;
}

/** The configuration of this process, from `process.env`: what each role's entry calls once. */
export function processConfig(role: ServerRole, opts: ProcessConfigOptions = {}): ServiceConfig {
  return loadRoleConfig(role, { ...opts.defaults, ...process.env, ...opts.overrides });
}

/** `analytics-server`'s settings: the credentials it accepts (none: any). */
export interface AnalyticsServerConfig {
  user: string | undefined;
  password: string | undefined;
}

export function loadAnalyticsServerConfig(env: Env): AnalyticsServerConfig {
  return { user: env[ENV.clickhouseUser] || undefined, password: env[ENV.clickhousePassword] || undefined };
}

export const analyticsServerProcessConfig = (): AnalyticsServerConfig =>
  loadAnalyticsServerConfig(process.env);

const csv = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

function readLlmSettings(r: EnvReader): LlmSettings {
  const keyText = r.raw(LLM_ENV.encryptionKey);
  let encryptionKey: Buffer | undefined;
  if (keyText !== undefined) {
    if (/^[0-9a-fA-F]{64}$/.test(keyText)) encryptionKey = Buffer.from(keyText, 'hex');
    else
      r.problems.push(
        `${LLM_ENV.encryptionKey} must be 64 hex characters (256 bits, e.g. openssl rand -hex 32)`,
      );
  }
  const whitelistedIps = csv(r.raw(LLM_ENV.llmConnectionWhitelistedIps));
  const badIps = whitelistedIps.filter((ip) => isIP(ip) === 0);
  if (badIps.length > 0)
    r.problems.push(
      `${LLM_ENV.llmConnectionWhitelistedIps} has entries that are not IP addresses: ${badIps.join(', ')}`,
    );
  return {
    encryptionKey,
    whitelistedHosts: csv(r.raw(LLM_ENV.llmConnectionWhitelistedHosts)).map((h) => h.toLowerCase()),
    whitelistedIps,
  };
}
