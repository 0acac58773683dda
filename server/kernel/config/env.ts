/**
 * The service configuration in parts (datastores, listeners, blob storage, sign-in, ...), each a zod
 * schema built from the contract's names, defaults and ranges (server/contract/env.ts); a process
 * composes the parts it reads (processes.ts). Every problem is reported as one line naming the
 * variables and the allowed values; nothing starts on a bad configuration.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { BACKUP_S3_ENV } from '../../contract/backup.ts';
import {
  ALERT_ENV,
  ConfigError,
  ENV,
  ENV_DEFAULTS,
  ENV_LIMITS,
  type Env,
  INGESTION_LOG_ENV,
  INGESTION_LOG_S3_ENV,
  LIFECYCLE_ENV,
  LLM_ENV,
  type LogLevel,
  MAX_PROPAGATION_STUCK_THRESHOLD_MINUTES,
  OTLP_GRPC_ENV,
  S3_ENV,
} from '../../contract/env.ts';
import {
  bool,
  checked,
  fields,
  intIn,
  intOr,
  limited,
  logLevel,
  oneOf,
  oneOfOr,
  optionalBool,
  parseEnv,
  text,
  textOr,
  verbatim,
} from '../../contract/env-schema.ts';
import { OTLP_GRPC_PORT } from '../../contract/ports.ts';
import { type OperatorObject, parseOperatorObject } from '../../contract/retries.ts';
import {
  describeViolation,
  findViolations,
  type ModeSettings,
  OTEL_BEHAVIOURS,
  RELEASE_3_SETTINGS,
  RELEASES,
  V4_DEFAULTS,
  WRITE_MODES,
} from '../../contract/write-modes.ts';
import { analyticsTimeoutsSchema, type TimeoutOverrides } from './analytics-timeouts.ts';
import { type AuthSettings, publicUrlSchema, signInSchema } from './auth.ts';
import { type BackfillTuning, backfillSchema } from './backfill-tuning.ts';
import { type S3Settings, s3Schema } from './blob-storage.ts';

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
  /** Rows per propagation statement: a larger staging partition is propagated in chunks. */
  propagationChunkRows: number;
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
  /** Where `observatory backup` writes and `observatory restore` reads (required by those roles). */
  backupStorage: S3Settings | undefined;
  exportIntervalSeconds: number;
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
  /** The operator's Job this command runs in (its result is recorded under it); absent: not a Job. */
  jobName: string | undefined;
  /** The backfill tuning variables that are set (applied to each step's row as it starts). */
  backfill: BackfillTuning;
  /** Overrides of the analytics statement bounds of this process's role. */
  analyticsTimeouts: TimeoutOverrides;
  alerts: AlertSettings;
  ingestionLog: IngestionLogSettings;
  otlpGrpc: OtlpGrpcSettings;
}

/** The web's OTLP/gRPC listener (server/app/web/otlp-grpc/). */
export interface OtlpGrpcSettings {
  /** undefined: not served (`SERVICE_OTLP_GRPC_PORT=0`). */
  port: number | undefined;
  /** PEM files of the listener's certificate and key; absent: plaintext. */
  tls: { certFile: string; keyFile: string } | undefined;
}

export interface IngestionLogSettings {
  /** The bucket the log's files go to; absent: no log, writes go straight to the analytics store. */
  s3: S3Settings | undefined;
  waitForStore: boolean;
  backlogMaxAgeSeconds: number;
  backlogMaxBytes: number;
  retentionHours: number;
  drainLeaseSeconds: number;
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

/** The mode settings; a release 3 build defaults to what version 3 knows. */
const modeSchema = fields({
  release: [ENV.release, oneOfOr(RELEASES, '4')],
  writeMode: [ENV.writeMode, oneOf(WRITE_MODES)],
  nativeOtelBehaviour: [ENV.nativeOtelBehaviour, oneOf(OTEL_BEHAVIOURS)],
  allowPreviewOptIn: [ENV.allowPreviewOptIn, optionalBool()],
  enableHistoricBackfill: [ENV.enableHistoricBackfill, optionalBool()],
  dropPidTidSortingTables: [ENV.dropPidTidSortingTables, optionalBool()],
})
  .transform((v): { mode: ModeSettings } => {
    const d = v.release === '3' ? RELEASE_3_SETTINGS : V4_DEFAULTS;
    return {
      mode: {
        release: v.release,
        writeMode: v.writeMode ?? d.writeMode,
        nativeOtelBehaviour: v.nativeOtelBehaviour ?? d.nativeOtelBehaviour,
        allowPreviewOptIn: v.allowPreviewOptIn ?? d.allowPreviewOptIn,
        enableHistoricBackfill: v.enableHistoricBackfill ?? d.enableHistoricBackfill,
        dropPidTidSortingTables: v.dropPidTidSortingTables ?? d.dropPidTidSortingTables,
      },
    };
  })
  .superRefine(({ mode }, ctx) => {
    for (const v of findViolations(mode))
      ctx.addIssue({ code: 'custom', message: describeViolation(v, (k) => ENV[k]) });
  });

const operatorObject = z.string().transform((v, ctx): OperatorObject => {
  const object = parseOperatorObject(v);
  if (object) return object;
  ctx.addIssue({ code: 'custom', message: 'must be <namespace>/<name> of an ObservabilityService' });
  return z.NEVER;
});

/** Where a server listens: HOST, and PORT where the process takes its port from the environment. */
const host = [ENV.host, textOr(ENV_DEFAULTS.host)] as const;
const port = [ENV.port, intIn(ENV_LIMITS.port)] as const;

/** The web's listeners and their limit: its `/metrics` port must not be its API's. */
const webListenersSchema = fields({
  host,
  port,
  metricsPort: [ENV.metricsPort, intIn(ENV_LIMITS.port)],
  maxInFlightWrites: [ENV.maxInFlightWrites, limited('maxInFlightWrites')],
}).superRefine((v, ctx) => {
  if (v.metricsPort !== undefined && v.metricsPort === v.port)
    ctx.addIssue({ code: 'custom', message: `${ENV.metricsPort} must differ from ${ENV.port}` });
});

const clickhouseSchema = fields({
  url: [
    ENV.clickhouseUrl,
    checked(
      z.string().regex(/^(https?|chdb):\/\//, { error: 'must start with http://, https:// or chdb://' }),
    ),
  ],
  user: [ENV.clickhouseUser, textOr(ENV_DEFAULTS.clickhouseUser)],
  password: [ENV.clickhousePassword, verbatim()],
  database: [ENV.clickhouseDb, textOr(ENV_DEFAULTS.clickhouseDb)],
  clusterEnabled: [ENV.columnarClusterEnabled, bool(ENV_DEFAULTS.columnarClusterEnabled)],
  clusterName: [ENV.columnarClusterName, textOr(ENV_DEFAULTS.columnarClusterName)],
  useLightweightUpdate: [ENV.columnarUseLightweightUpdate, bool(ENV_DEFAULTS.columnarUseLightweightUpdate)],
}).transform((c): { clickhouse: ClickHouseSettings } => ({ clickhouse: { ...c, url: c.url ?? '' } }));

/** The media bucket (the worker deletes what expired traces leave) and the web's upload bounds. */
const mediaBucketSchema = s3Schema(S3_ENV.media).transform((s3): { media: Pick<MediaSettings, 's3'> } => ({
  media: { s3 },
}));
const mediaUploadsSchema = fields({
  maxContentLength: [ENV.mediaMaxContentLength, limited('mediaMaxContentLength')],
  downloadUrlExpirySeconds: [ENV.mediaDownloadUrlExpirySeconds, limited('mediaDownloadUrlExpirySeconds')],
}).transform((media) => ({ media }));

const exportStorageSchema = s3Schema(S3_ENV.export).transform((exportStorage) => ({ exportStorage }));

/**
 * The ingestion log's bucket (every reader of the log), the web's bounds on writing to it, and
 * the retention and drain lease of the worker (a restore replays within the retention).
 */
const ingestionLogBucketSchema = s3Schema(INGESTION_LOG_S3_ENV).transform(
  (s3): { ingestionLog: Pick<IngestionLogSettings, 's3'> } => ({ ingestionLog: { s3 } }),
);
const ingestionLogWritesSchema = fields({
  waitForStore: [INGESTION_LOG_ENV.waitForStore, bool(ENV_DEFAULTS.ingestionLogWaitForStore)],
  backlogMaxAgeSeconds: [INGESTION_LOG_ENV.backlogMaxAgeSeconds, limited('ingestionBacklogMaxAgeSeconds')],
  backlogMaxBytes: [INGESTION_LOG_ENV.backlogMaxBytes, limited('ingestionBacklogMaxBytes')],
}).transform((ingestionLog) => ({ ingestionLog }));
const ingestionLogRetentionSchema = fields({
  retentionHours: [INGESTION_LOG_ENV.retentionHours, limited('ingestionLogRetentionHours')],
}).transform((ingestionLog) => ({ ingestionLog }));
const ingestionLogDrainSchema = fields({
  drainLeaseSeconds: [INGESTION_LOG_ENV.drainLeaseSeconds, limited('ingestionLogDrainLeaseSeconds')],
}).transform((ingestionLog) => ({ ingestionLog }));
const otlpGrpcSchema = fields({
  port: [OTLP_GRPC_ENV.port, intOr(ENV_LIMITS.otlpGrpcPort, OTLP_GRPC_PORT)],
  certFile: [OTLP_GRPC_ENV.tlsCertFile, text()],
  keyFile: [OTLP_GRPC_ENV.tlsKeyFile, text()],
}).transform(({ port, certFile, keyFile }, ctx): { otlpGrpc: OtlpGrpcSettings } => {
  // Refused inside the transform: an untransformed `port` would clash with PORT's in the intersection.
  if ((certFile === undefined) !== (keyFile === undefined)) {
    ctx.addIssue({
      code: 'custom',
      message: `${OTLP_GRPC_ENV.tlsCertFile} and ${OTLP_GRPC_ENV.tlsKeyFile} must be set together`,
    });
    return z.NEVER;
  }
  return {
    otlpGrpc: {
      port: port === 0 ? undefined : port,
      tls: certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : undefined,
    },
  };
});
const backupStorageSchema = s3Schema(BACKUP_S3_ENV).transform((backupStorage) => ({ backupStorage }));

const csv = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

const ipList = z
  .string()
  .transform(csv)
  .superRefine((ips, ctx) => {
    const bad = ips.filter((ip) => isIP(ip) === 0);
    if (bad.length > 0)
      ctx.addIssue({ code: 'custom', message: `has entries that are not IP addresses: ${bad.join(', ')}` });
  });

/** The key that seals stored secrets, as written: 64 hex characters (also `dev`'s key file). */
export const encryptionKeyText = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, {
    error: 'must be 64 hex characters (256 bits, e.g. openssl rand -hex 32)',
  })
  .transform((key) => Buffer.from(key, 'hex'));

const llmSchema = fields({
  encryptionKey: [LLM_ENV.encryptionKey, checked(encryptionKeyText)],
  whitelistedHosts: [
    LLM_ENV.llmConnectionWhitelistedHosts,
    checked(z.string().transform((v) => csv(v).map((h) => h.toLowerCase()))),
  ],
  whitelistedIps: [LLM_ENV.llmConnectionWhitelistedIps, checked(ipList)],
}).transform((l): { llm: LlmSettings } => ({
  llm: { ...l, whitelistedHosts: l.whitelistedHosts ?? [], whitelistedIps: l.whitelistedIps ?? [] },
}));

const alertsSchema = fields({
  tickSeconds: [ALERT_ENV.tickSeconds, limited('alertTickSeconds')],
  retryBaseSeconds: [ALERT_ENV.retryBaseSeconds, limited('alertRetryBaseSeconds')],
}).transform((alerts): { alerts: AlertSettings } => ({ alerts }));

/** A part's output: some of the configuration's settings (of a nested group, some of its keys). */
type PartOutput = {
  [K in keyof ServiceConfig]?: ServiceConfig[K] extends object ? Partial<ServiceConfig[K]> : ServiceConfig[K];
};
const part = <T extends PartOutput>(schema: z.ZodType<T>): z.ZodType<T> => schema;

/**
 * The settings in the groups processes read whole; each part parses its own variables only, so a
 * process composed of some parts leaves every other variable alone.
 */
export const PARTS = {
  mode: part(modeSchema),
  /** When propagation counts as stuck: the worker's health and the web's migration page. */
  propagationWatch: part(
    fields({
      propagationStuckThresholdMinutes: [
        ENV.propagationStuckThresholdMinutes,
        intOr(
          { min: 1, max: MAX_PROPAGATION_STUCK_THRESHOLD_MINUTES },
          ENV_DEFAULTS.propagationStuckThresholdMinutes,
        ),
      ],
    }),
  ),
  propagation: part(
    fields({
      propagationIntervalSeconds: [ENV.propagationIntervalSeconds, limited('propagationIntervalSeconds')],
      propagationGraceSeconds: [ENV.propagationGraceSeconds, limited('propagationGraceSeconds')],
      propagationChunkRows: [ENV.propagationChunkRows, limited('propagationChunkRows')],
    }),
  ),
  relational: part(fields({ databaseUrl: [ENV.databaseUrl, text()] })),
  redis: part(fields({ redisUrl: [ENV.redisUrl, text()] })),
  /** `dev` takes its port from `--port`. */
  host: part(fields({ host })),
  listener: part(fields({ host, port })),
  webListeners: part(webListenersSchema),
  exportSchedule: part(
    fields({ exportIntervalSeconds: [ENV.exportIntervalSeconds, limited('exportIntervalSeconds')] }),
  ),
  /** The migration page names the ObservabilityService in its kubectl commands. */
  operatorObject: part(fields({ operatorObject: [ENV.operatorObject, checked(operatorObject)] })),
  logging: part(fields({ logLevel: [ENV.logLevel, logLevel()] })),
  shutdown: part(
    fields({ shutdownDrainSeconds: [LIFECYCLE_ENV.shutdownDrainSeconds, limited('shutdownDrainSeconds')] }),
  ),
  autoMigration: part(
    fields({ autoMigrationDisabled: [ENV.autoMigrationDisabled, bool(ENV_DEFAULTS.autoMigrationDisabled)] }),
  ),
  backfillInWorker: part(
    fields({
      backgroundMigrationsInWorker: [
        ENV.backgroundMigrationsInWorker,
        bool(ENV_DEFAULTS.backgroundMigrationsInWorker),
      ],
    }),
  ),
  /** The process's name in locks and leases. */
  identity: part(fields({ podName: [ENV.podName, text()] })),
  /** The operator's Job a command records its result under. */
  job: part(fields({ jobName: [ENV.jobName, text()] })),
  /** The analytics store and the bounds of this process's statements in it. */
  analytics: part(clickhouseSchema.and(analyticsTimeoutsSchema)),
  mediaBucket: part(mediaBucketSchema),
  mediaUploads: part(mediaUploadsSchema),
  exportBucket: part(exportStorageSchema),
  backupBucket: part(backupStorageSchema),
  signIn: part(signInSchema),
  /** Also the worker's: the links its notifications carry. */
  publicUrl: part(publicUrlSchema),
  llm: part(llmSchema),
  backfill: part(backfillSchema),
  alerts: part(alertsSchema),
  ingestionLogBucket: part(ingestionLogBucketSchema),
  ingestionLogWrites: part(ingestionLogWritesSchema),
  ingestionLogRetention: part(ingestionLogRetentionSchema),
  ingestionLogDrain: part(ingestionLogDrainSchema),
  otlpGrpc: part(otlpGrpcSchema),
};
export type PartName = keyof typeof PARTS;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

/** `parsed` over `defaults`, a nested group key by key (a part may set some of a group's keys). */
const over = (defaults: ServiceConfig, parsed: PartOutput): ServiceConfig =>
  Object.fromEntries(
    Object.entries(defaults).map(([key, d]) => {
      if (!(key in parsed)) return [key, d];
      const p = parsed[key as keyof PartOutput];
      return [key, isPlainObject(d) && isPlainObject(p) ? { ...d, ...p } : p];
    }),
  ) as unknown as ServiceConfig;

const ALL_PARTS = Object.keys(PARTS) as PartName[];
/** The parts in one order, so a refusal names the variables alike in every process. */
const intersect = (parts: readonly PartName[]) =>
  ALL_PARTS.filter((name) => parts.includes(name))
    .map((name): z.ZodType<PartOutput> => PARTS[name])
    .reduce((a, b) => a.and(b));

/** Every setting at its default: what a process gets for the parts it does not read. */
const DEFAULTS = parseEnv(intersect(ALL_PARTS), {}) as ServiceConfig;

/**
 * The configuration a process composed of `parts` reads: those parts from `env`, every other
 * setting at its default (the process does not use it), so its code keeps one shape.
 */
export const composeConfig = (parts: readonly PartName[]): z.ZodType<ServiceConfig> =>
  intersect(parts).transform((parsed) => over(DEFAULTS, parsed));

/** Every part from `env` (what tests and tools that stand in for several processes read). */
export const loadConfig = (env: Env): ServiceConfig => parseEnv(composeConfig(ALL_PARTS), env);

/** `analytics-server`'s settings: the credentials it accepts (none: any). */
export interface AnalyticsServerConfig {
  user: string | undefined;
  password: string | undefined;
}

export const analyticsServerSchema = fields({
  user: [ENV.clickhouseUser, verbatim()],
  password: [ENV.clickhousePassword, verbatim()],
}).transform(
  ({ user, password }): AnalyticsServerConfig => ({
    user: user || undefined,
    password: password || undefined,
  }),
);

export const loadAnalyticsServerConfig = (env: Env): AnalyticsServerConfig =>
  parseEnv(analyticsServerSchema, env);
