/**
 * The service's environment: variable names (fixed by the spec), their defaults and ranges, so the
 * operator renders exactly what the server reads (env-schema.ts builds the parsers from them).
 */

/** Names of the variables the service reads. */
export const ENV = {
  release: 'SERVICE_RELEASE',
  writeMode: 'SERVICE_MIGRATION_V4_WRITE_MODE',
  nativeOtelBehaviour: 'SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR',
  allowPreviewOptIn: 'SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN',
  enableHistoricBackfill: 'SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL',
  dropPidTidSortingTables: 'SERVICE_BACKGROUND_MIGRATION_V4_DROP_PID_TID_SORTING_TABLES',
  propagationStuckThresholdMinutes: 'SERVICE_EVENT_PROPAGATION_STUCK_THRESHOLD_MINUTES',
  propagationIntervalSeconds: 'SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS',
  propagationGraceSeconds: 'SERVICE_EVENT_PROPAGATION_GRACE_SECONDS',
  /** Rows of a staging partition per propagation `INSERT ... SELECT`; a larger one is cut in chunks. */
  propagationChunkRows: 'SERVICE_EVENT_PROPAGATION_CHUNK_ROWS',
  columnarClusterEnabled: 'COLUMNAR_CLUSTER_ENABLED',
  columnarClusterName: 'COLUMNAR_CLUSTER_NAME',
  columnarUseLightweightUpdate: 'COLUMNAR_USE_LIGHTWEIGHT_UPDATE',
  databaseUrl: 'DATABASE_URL',
  redisUrl: 'REDIS_URL',
  clickhouseUrl: 'CLICKHOUSE_URL',
  clickhouseUser: 'CLICKHOUSE_USER',
  clickhousePassword: 'CLICKHOUSE_PASSWORD',
  clickhouseDb: 'CLICKHOUSE_DB',
  host: 'HOST',
  port: 'PORT',
  /** The web's `/metrics` on its own port; unset: on `PORT` beside the API. */
  metricsPort: 'METRICS_PORT',
  maxInFlightWrites: 'SERVICE_INGESTION_MAX_IN_FLIGHT',
  /** Schema migrations are left to someone else (the operator's Jobs). */
  autoMigrationDisabled: 'SERVICE_AUTO_MIGRATION_DISABLED',
  /** The worker runs the backfill chain itself (false: the operator's Jobs run it). */
  backgroundMigrationsInWorker: 'SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER',
  /** The process's identity in locks and leader leases (the Pod name in a cluster). */
  podName: 'POD_NAME',
  /**
   * The operator's Job a one-shot command runs in: the command records its result under this name
   * (server/features/job-results/), so the operator still reads it once the Job's Pod is gone.
   */
  jobName: 'SERVICE_JOB_NAME',
  logLevel: 'LOG_LEVEL',
  /**
   * `<namespace>/<name>` of the ObservabilityService that runs this process (set by the operator),
   * so the migration page can name it in the kubectl command that retries a step.
   */
  operatorObject: 'SERVICE_OPERATOR_OBJECT',
  /** Largest media file (bytes) an SDK may upload. */
  mediaMaxContentLength: 'SERVICE_S3_MEDIA_MAX_CONTENT_LENGTH',
  /** Seconds between two passes of the worker's export job. */
  exportIntervalSeconds: 'SERVICE_EXPORT_INTERVAL_SECONDS',
  /** Lifetime of the download URL `GET /api/public/media/{id}` returns. */
  mediaDownloadUrlExpirySeconds: 'SERVICE_S3_MEDIA_DOWNLOAD_URL_EXPIRY_SECONDS',
} as const;

/**
 * LLM connections (evaluation). A secret of the deployment and its network policy, not of the
 * migration, so not rendered by the operator from its spec: set them through the extra environment
 * of the web and the worker (the encryption key from a Secret).
 */
export const LLM_ENV = {
  /**
   * 256-bit key (64 hex characters, as the reference's `ENCRYPTION_KEY`) that encrypts LLM
   * connection secrets at rest; required once a connection exists.
   */
  encryptionKey: 'ENCRYPTION_KEY',
  /** Comma-separated host names an LLM connection may reach although they resolve to private addresses. */
  llmConnectionWhitelistedHosts: 'SERVICE_LLM_CONNECTION_WHITELISTED_HOST',
  /** Comma-separated IP addresses an LLM connection may reach although they are private. */
  llmConnectionWhitelistedIps: 'SERVICE_LLM_CONNECTION_WHITELISTED_IPS',
} as const;

/**
 * The worker's alert evaluation. Timing of one job, not of the migration, so not rendered by the
 * operator from its spec: set them through the worker's extra environment (tests set them small).
 */
export const ALERT_ENV = {
  /** Seconds between two scheduler ticks; a rule is evaluated at the first tick after it is due. */
  tickSeconds: 'SERVICE_ALERT_TICK_SECONDS',
  /** Seconds before the first retry of a failed notification; each further retry waits twice as long. */
  retryBaseSeconds: 'SERVICE_ALERT_RETRY_BASE_SECONDS',
} as const;

/**
 * OTLP over gRPC on the web (server/app/web/otlp-grpc/): its port (0: not served) and, optionally, the
 * PEM files of its TLS certificate and key (both or neither; without them the port is plaintext,
 * as the Collector's receiver is by default).
 */
export const OTLP_GRPC_ENV = {
  port: 'SERVICE_OTLP_GRPC_PORT',
  tlsCertFile: 'SERVICE_OTLP_GRPC_TLS_CERT_FILE',
  tlsKeyFile: 'SERVICE_OTLP_GRPC_TLS_KEY_FILE',
} as const;

/**
 * The ingestion log (server/features/ingestion/log/): where accepted writes are made durable before they
 * are acknowledged, and its bounds. Off unless its bucket is set (named like the reference's
 * `LANGFUSE_S3_EVENT_UPLOAD_*`); set through the web's and the worker's extra environment.
 */
export const INGESTION_LOG_S3_ENV = s3Names('SERVICE_S3_EVENT_UPLOAD');
export const INGESTION_LOG_ENV = {
  /** true: the web writes the rows itself before answering (the drain only catches up); false: it answers once the write is logged. */
  waitForStore: 'SERVICE_INGESTION_LOG_WAIT_FOR_STORE',
  /** Age of the oldest undrained write past which the web answers 429 with Retry-After. */
  backlogMaxAgeSeconds: 'SERVICE_INGESTION_BACKLOG_MAX_AGE_SECONDS',
  /** Undrained bytes past which the web answers 429 with Retry-After. */
  backlogMaxBytes: 'SERVICE_INGESTION_BACKLOG_MAX_BYTES',
  /** Hours a drained log file is kept (for `observatory ingestion replay`) before the worker deletes it. */
  retentionHours: 'SERVICE_INGESTION_LOG_RETENTION_HOURS',
  /** Seconds a drain holds the files it claimed; a claim not checkpointed by then is drained again by another. */
  drainLeaseSeconds: 'SERVICE_INGESTION_LOG_DRAIN_LEASE_SECONDS',
} as const;

/**
 * The web's sign-in and session settings. Deployment-specific (the proxy in front, the public URL),
 * so not rendered by the operator from its spec: set them through the web's extra environment.
 */
export const AUTH_ENV = {
  /**
   * The proxies whose `X-Forwarded-For` / `X-Forwarded-Proto` the web believes (Fastify's
   * `trustProxy`): `false` (default, the socket's peer is the client), `true`, a hop count, or a
   * comma-separated list of addresses and CIDR ranges.
   */
  trustedProxies: 'SERVICE_TRUSTED_PROXIES',
  /** The URL users reach the web UI at (the reference's `NEXTAUTH_URL`); its scheme decides `Secure` cookies. */
  publicUrl: 'SERVICE_PUBLIC_URL',
  /** Minutes a web UI session lives (the reference's name and unit). */
  sessionMaxAgeMinutes: 'AUTH_SESSION_MAX_AGE',
  /** Sign-in attempts per (account, client address) in the sign-in window before that pair is refused. */
  signInLimitPerAccountAddress: 'SERVICE_AUTH_SIGNIN_LIMIT_PER_ACCOUNT_ADDRESS',
  /** Sign-in attempts per client address (any account) in the sign-in window. */
  signInLimitPerAddress: 'SERVICE_AUTH_SIGNIN_LIMIT_PER_ADDRESS',
} as const;

/**
 * How a server process stops. Not rendered by the operator (the Pod's termination grace period is),
 * so set through a role's extra environment.
 */
export const LIFECYCLE_ENV = {
  /** Seconds between SIGTERM (readiness fails) and closing the listeners and clients. */
  shutdownDrainSeconds: 'SERVICE_SHUTDOWN_DRAIN_SECONDS',
} as const;

/** The operator process's own settings (the chart renders them; the server reads none). */
export const OPERATOR_ENV = {
  /** Where the leader Lease lives; unset: the watched namespace, else `default`. */
  namespace: 'OPERATOR_NAMESPACE',
  /** The one namespace watched; unset or empty: all. */
  watchNamespace: 'OPERATOR_WATCH_NAMESPACE',
  leaderElection: 'OPERATOR_LEADER_ELECTION',
  leaseName: 'OPERATOR_LEASE_NAME',
  healthPort: 'OPERATOR_HEALTH_PORT',
  metricsPort: 'OPERATOR_METRICS_PORT',
  /** The address both listeners bind; unset: `HOST`, else every address. */
  bindAddress: 'OPERATOR_BIND_ADDRESS',
  /**
   * true: watch Secrets and ConfigMaps labeled observatory.dev/watch=true and roll the Pods that read
   * a changed key; false: no Secret access at all.
   */
  secretRollouts: 'OPERATOR_SECRET_ROLLOUTS',
} as const;

export const OPERATOR_ENV_DEFAULTS = {
  leaseNamespace: 'default',
  leaderElection: true,
  leaseName: 'observatory-operator',
  healthPort: 8081,
  metricsPort: 8080,
  secretRollouts: true,
} as const;

/** The levels LOG_LEVEL takes (pino's). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The settings of one S3 bucket the service uses, as variable names under a common stem. */
export function s3Names<Stem extends string>(stem: Stem) {
  return {
    bucket: `${stem}_BUCKET`,
    /** Prepended to every object key as given (e.g. `media/`). */
    prefix: `${stem}_PREFIX`,
    region: `${stem}_REGION`,
    /** An S3-compatible server's URL; absent for AWS S3 itself. */
    endpoint: `${stem}_ENDPOINT`,
    forcePathStyle: `${stem}_FORCE_PATH_STYLE`,
    /** Both or neither; neither means the AWS SDK's default credential chain. */
    accessKeyId: `${stem}_ACCESS_KEY_ID`,
    secretAccessKey: `${stem}_SECRET_ACCESS_KEY`,
  } as const;
}
export type S3EnvNames = ReturnType<typeof s3Names<string>>;

/**
 * Blob storage (the S3 API), one bucket setting per purpose, named like the reference's
 * `LANGFUSE_S3_MEDIA_UPLOAD_*` and `LANGFUSE_S3_BATCH_EXPORT_*`. A purpose without a bucket is off.
 */
export const S3_ENV = {
  /** Media the SDKs upload through presigned URLs. */
  media: s3Names('SERVICE_S3_MEDIA_UPLOAD'),
  /** Files the scheduled exports write. */
  export: s3Names('SERVICE_S3_BATCH_EXPORT'),
} as const;
export type BlobPurpose = keyof typeof S3_ENV;

/** Defaults of the settings that are not mode settings (those are V4_DEFAULTS). */
export const ENV_DEFAULTS = {
  propagationStuckThresholdMinutes: 15,
  clickhouseUser: 'default',
  clickhouseDb: 'default',
  columnarClusterEnabled: false,
  columnarClusterName: 'default',
  columnarUseLightweightUpdate: false,
  host: '0.0.0.0',
  maxInFlightWrites: 64,
  propagationIntervalSeconds: 60,
  propagationGraceSeconds: 30,
  propagationChunkRows: 500_000,
  logLevel: 'info' as LogLevel,
  /** The reference's default: 1 GB. */
  mediaMaxContentLength: 1_000_000_000,
  mediaDownloadUrlExpirySeconds: 3600,
  exportIntervalSeconds: 60,
  alertTickSeconds: 15,
  alertRetryBaseSeconds: 30,
  /** What the AWS SDK signs for when no region is named; S3-compatible servers accept it. */
  s3Region: 'us-east-1',
  s3ForcePathStyle: false,
  /** Seven days (the reference: 30 days). */
  sessionMaxAgeMinutes: 7 * 24 * 60,
  signInLimitPerAccountAddress: 5,
  signInLimitPerAddress: 100,
  shutdownDrainSeconds: 3,
  autoMigrationDisabled: false,
  backgroundMigrationsInWorker: true,
  /** Acknowledged once durable in the log; the drain writes the store in large batches (docs/ingestion-log.md). */
  ingestionLogWaitForStore: false,
  ingestionBacklogMaxAgeSeconds: 3600,
  /** 10 GiB. */
  ingestionBacklogMaxBytes: 10 * 1024 ** 3,
  ingestionLogRetentionHours: 7 * 24,
  ingestionLogDrainLeaseSeconds: 60,
} as const;

/** Accepted ranges of the integer settings (the server refuses others at start; the CRD too). */
export const ENV_LIMITS = {
  maxInFlightWrites: { min: 1, max: 10_000 },
  propagationIntervalSeconds: { min: 1, max: 3600 },
  propagationGraceSeconds: { min: 0, max: 3600 },
  propagationChunkRows: { min: 1, max: 100_000_000 },
  mediaMaxContentLength: { min: 1, max: Number.MAX_SAFE_INTEGER },
  /** Presigned URLs (SigV4) live at most seven days. */
  mediaDownloadUrlExpirySeconds: { min: 1, max: 7 * 24 * 3600 },
  exportIntervalSeconds: { min: 1, max: 24 * 3600 },
  alertTickSeconds: { min: 1, max: 3600 },
  alertRetryBaseSeconds: { min: 1, max: 3600 },
  /** The reference refuses 5 or less (its session tokens refresh every 5 minutes). */
  sessionMaxAgeMinutes: { min: 6, max: 365 * 24 * 60 },
  signInLimitPerAccountAddress: { min: 1, max: 1000 },
  signInLimitPerAddress: { min: 1, max: 100_000 },
  shutdownDrainSeconds: { min: 0, max: 3600 },
  ingestionBacklogMaxAgeSeconds: { min: 10, max: 7 * 24 * 3600 },
  ingestionBacklogMaxBytes: { min: 1024 ** 2, max: Number.MAX_SAFE_INTEGER },
  /** Above the sweeper's window (a day), so a file it could queue again is never one retention deleted. */
  ingestionLogRetentionHours: { min: 25, max: 365 * 24 },
  /** Longer than a claim of 500 files takes to write (a few seconds), or drains would overlap for nothing. */
  ingestionLogDrainLeaseSeconds: { min: 5, max: 3600 },
  /** Ports of the operator's listeners. */
  port: { min: 1, max: 65535 },
  /** 0 turns the web's OTLP/gRPC listener off. */
  otlpGrpcPort: { min: 0, max: 65535 },
} as const;

/** The forms of the S3 settings the server accepts (RE2-compatible, so the CRD carries them too). */
export const S3_PATTERNS = {
  /** S3's bucket naming rules: 3-63 lower-case letters, digits, dots and hyphens, alphanumeric at both ends. */
  bucket: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$',
  endpoint: '^https?://[^/]',
  /** Empty, or not starting with '/' (keys are relative to the bucket). */
  prefix: '^$|^[^/]',
} as const;

/** Upper bound of the propagation stuck threshold: one week. */
export const MAX_PROPAGATION_STUCK_THRESHOLD_MINUTES = 7 * 24 * 60;

export type Env = Record<string, string | undefined>;

/** A refused configuration; its message is one line naming every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * The historic backfill's tuning, rendered by the operator from `spec.backfill` into its backfill
 * Jobs. A variable that is set is written into the step's `background_migrations.args` as the step
 * starts (the row shows what ran); unset ones leave the row's value, else the default.
 */
export const BACKFILL_ENV = {
  /** Rows per chunk (one `INSERT ... SELECT` over one key range of one partition). */
  chunkRows: 'SERVICE_BACKFILL_CHUNK_ROWS',
  /** Pause after each chunk, milliseconds, to leave the analytics store room for live traffic. */
  throttleMs: 'SERVICE_BACKFILL_THROTTLE_MS',
  /** Chunks of one step in flight at once. */
  concurrency: 'SERVICE_BACKFILL_CONCURRENCY',
} as const;
export type BackfillTuningKey = keyof typeof BACKFILL_ENV;

export const BACKFILL_DEFAULTS: Record<BackfillTuningKey, number> = {
  chunkRows: 200_000,
  throttleMs: 0,
  concurrency: 1,
};

export const BACKFILL_LIMITS: Record<BackfillTuningKey, { min: number; max: number }> = {
  chunkRows: { min: 1, max: 100_000_000 },
  throttleMs: { min: 0, max: 600_000 },
  /** Each chunk is a heavy merge in the store: a few at once at most. */
  concurrency: { min: 1, max: 16 },
};

/**
 * Bounds of every analytics statement, per process: each role (web, worker, backfill Job, other
 * Jobs) has its own defaults (ANALYTICS_ROLE_BOUNDS), these override them. Not rendered by the
 * operator: set them through a role's extra environment (`spec.<role>.template.env`).
 */
export const ANALYTICS_TIMEOUT_ENV = {
  /** Seconds the client waits for a statement's answer (@clickhouse/client `request_timeout`). */
  requestTimeoutSeconds: 'CLICKHOUSE_REQUEST_TIMEOUT_SECONDS',
  /** Seconds the store runs a statement before refusing it (`max_execution_time`); below the above. */
  maxExecutionTimeSeconds: 'CLICKHOUSE_MAX_EXECUTION_TIME_SECONDS',
} as const;

export type AnalyticsRole = 'web' | 'worker' | 'backfill' | 'jobs';

/**
 * Per role: the web answers people (short reads), the worker propagates a partition per
 * `INSERT ... SELECT`, a backfill Job copies a chunk per statement, the other Jobs run DDL.
 */
export const ANALYTICS_ROLE_BOUNDS: Record<
  AnalyticsRole,
  { requestTimeoutSeconds: number; maxExecutionTimeSeconds: number }
> = {
  web: { requestTimeoutSeconds: 30, maxExecutionTimeSeconds: 25 },
  worker: { requestTimeoutSeconds: 600, maxExecutionTimeSeconds: 570 },
  backfill: { requestTimeoutSeconds: 1800, maxExecutionTimeSeconds: 1740 },
  jobs: { requestTimeoutSeconds: 1800, maxExecutionTimeSeconds: 1740 },
};

export const ANALYTICS_TIMEOUT_LIMITS = { min: 1, max: 86_400 } as const;

/**
 * Progress headers every this many milliseconds on statements allowed over a minute: below the
 * idle timeout of common load balancers (60 s), so a long statement's connection is not cut.
 */
export const ANALYTICS_PROGRESS_INTERVAL_MS = 25_000;
