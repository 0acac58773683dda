/**
 * `observatory.dev/v1alpha1` ObservabilityService: the single source of truth for the API.
 * The CRD (crds/) is rendered from these schema nodes and the TypeScript types are inferred from
 * them, so a field, its description for `kubectl explain`, its validation and its type can never
 * drift apart. CEL rules refuse at admission what the spec forbids; `operator/validation.ts`
 * repeats them in the reconciler for clusters where a rule could not apply.
 */
import type { V1NetworkPolicyPeer } from '@kubernetes/client-node';
import {
  BACKUP_ID_PATTERN,
  BACKUP_PARTS,
  BACKUP_S3_ENV,
  KEEP_LAST_LIMITS,
  VERIFY_EVERY_LIMITS,
  VERIFY_RESULTS,
} from '../../server/contract/backup.ts';
import { DURATION_PATTERN } from '../../server/contract/duration.ts';
import {
  BACKFILL_DEFAULTS,
  BACKFILL_ENV,
  BACKFILL_LIMITS,
  ENV,
  ENV_DEFAULTS,
  ENV_LIMITS,
  INGESTION_LOG_ENV,
  INGESTION_LOG_S3_ENV,
  LOG_LEVELS,
  S3_ENV,
  S3_PATTERNS,
  type S3EnvNames,
} from '../../server/contract/env.ts';
import { OTLP_GRPC_PORT, PORTS } from '../../server/contract/ports.ts';
import { ANNOTATIONS, API_GROUP, RESOURCE_SHORT_NAME } from '../../server/contract/retries.ts';
import { BACKFILL_STEP_STATUSES } from '../../server/contract/worker-api.ts';
import { BACKFILL_WIDTH_RULE, spec as specRules } from './rules.ts';
import {
  array,
  boolean,
  type CelRule,
  defaulted,
  enumOf,
  integer,
  intOrPercent,
  map,
  type ObjectOf,
  object,
  opaque,
  optional,
  quantity,
  string,
  type TypeOf,
} from './schema.ts';
import { podTemplate } from './template.ts';

export const GROUP = API_GROUP;
export { ANNOTATIONS };
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'ObservabilityService';
export const PLURAL = 'observabilityservices';
export const SINGULAR = 'observabilityservice';
export const SHORT_NAMES = [RESOURCE_SHORT_NAME];

export const RELEASES = ['3', '4'] as const;
export const WRITE_MODES = ['Legacy', 'Dual', 'EventsOnly'] as const;
export const OTEL_BEHAVIOURS = ['DualWrite', 'Direct'] as const;
export const MIGRATION_STATES = ['Release3', 'Legacy', 'Dual', 'EventsOnly'] as const;
export const APPROVALS = ['Manual', 'Automatic'] as const;
export const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;

export type WriteMode = (typeof WRITE_MODES)[number];
export type OtelBehaviour = (typeof OTEL_BEHAVIOURS)[number];
export type MigrationState = (typeof MIGRATION_STATES)[number];

/** A finished Job is kept one day by default (CloudNativePG keeps its Jobs until the next one). */
export const DEFAULT_JOB_TTL_SECONDS = 86_400;
/** Below a minute the Job could be gone before the operator reads its result; above 30 days it is clutter. */
export const JOB_TTL_LIMITS = { min: 60, max: 30 * 86_400 } as const;

/** The contract's duration grammar: "90s", "30m", "24h", "7d", "1h30m". */
const duration = (description: string) => string({ description, maxLength: 32, pattern: DURATION_PATTERN });

const secretKeyRef = (what: string) =>
  object(
    {
      name: string({ description: 'Name of a Secret in the namespace of this object.', maxLength: 253 }),
      key: string({ description: `Key of the Secret whose value is ${what}.`, maxLength: 253 }),
    },
    { description: `Secret key holding ${what}; never written inline.` },
  );

/** An S3 bucket's settings, each naming the variable it renders (`server/contract/env.ts` S3_ENV). */
const s3Fields = (names: S3EnvNames) => ({
  bucket: string({
    description: `Bucket name (${names.bucket}): 3-63 characters a-z, 0-9, '.', '-', a letter or digit at both ends.`,
    maxLength: 63,
    minLength: 3,
    pattern: S3_PATTERNS.bucket,
  }),
  prefix: optional(
    string({
      description: `Prepended to every object key as given, e.g. "media/" (${names.prefix}); must not start with '/'. Default none.`,
      maxLength: 512,
      pattern: S3_PATTERNS.prefix,
    }),
  ),
  region: optional(
    string({
      description: `Region the requests are signed for (${names.region}); default ${ENV_DEFAULTS.s3Region}.`,
      maxLength: 64,
      minLength: 1,
    }),
  ),
  endpoint: optional(
    string({
      description: `URL of an S3-compatible server, http:// or https:// (${names.endpoint}); unset for AWS S3 itself.`,
      maxLength: 2048,
      pattern: S3_PATTERNS.endpoint,
    }),
  ),
  forcePathStyle: optional(
    boolean({
      description: `Address the bucket in the path instead of the host name (${names.forcePathStyle}); default false.`,
    }),
  ),
  accessKeyIdSecretRef: optional(secretKeyRef(`the access key id (${names.accessKeyId})`)),
  secretAccessKeySecretRef: optional(secretKeyRef(`the secret access key (${names.secretAccessKey})`)),
});

/** Both credential keys or neither (the AWS SDK's default chain: web identity, instance role). */
export const BLOB_CREDENTIALS_RULE = {
  rule: 'has(self.accessKeyIdSecretRef) == has(self.secretAccessKeySecretRef)',
  message:
    'set both accessKeyIdSecretRef and secretAccessKeySecretRef, or neither for ambient credentials (web identity, instance role)',
  reason: 'FieldValueRequired',
} as const;

const blobStorage = object(
  {
    media: optional(
      object(
        {
          ...s3Fields(S3_ENV.media),
          maxContentLength: optional(
            integer({
              description: `Largest media file in bytes an SDK may upload (${ENV.mediaMaxContentLength}); default ${ENV_DEFAULTS.mediaMaxContentLength}.`,
              minimum: ENV_LIMITS.mediaMaxContentLength.min,
              maximum: ENV_LIMITS.mediaMaxContentLength.max,
              format: 'int64',
            }),
          ),
          downloadUrlExpirySeconds: optional(
            integer({
              description: `Lifetime in seconds of the download URLs the media API hands out (${ENV.mediaDownloadUrlExpirySeconds}); default ${ENV_DEFAULTS.mediaDownloadUrlExpirySeconds}, at most seven days.`,
              minimum: ENV_LIMITS.mediaDownloadUrlExpirySeconds.min,
              maximum: ENV_LIMITS.mediaDownloadUrlExpirySeconds.max,
              format: 'int32',
            }),
          ),
        },
        {
          description:
            'The bucket the SDKs upload media to through presigned URLs (web Pods). Unset: the media API answers that media is not configured.',
          validations: [BLOB_CREDENTIALS_RULE],
        },
      ),
    ),
    exports: optional(
      object(
        {
          ...s3Fields(S3_ENV.export),
          intervalSeconds: optional(
            integer({
              description: `Seconds between two passes of the worker's export job (${ENV.exportIntervalSeconds}); default ${ENV_DEFAULTS.exportIntervalSeconds}.`,
              minimum: ENV_LIMITS.exportIntervalSeconds.min,
              maximum: ENV_LIMITS.exportIntervalSeconds.max,
              format: 'int32',
            }),
          ),
        },
        {
          description:
            'The bucket scheduled exports write to (the worker runs them; the web Pods accept export settings and list the files). Unset: exports cannot be configured.',
          validations: [BLOB_CREDENTIALS_RULE],
        },
      ),
    ),
    ingestionLog: optional(
      object(
        {
          ...s3Fields(INGESTION_LOG_S3_ENV),
          waitForStore: optional(
            boolean({
              description: `false: the web answers once the write is in the log and leaves the rows to the workers' drain, which writes them in large batches; true: it also writes each request's rows to the analytics store before it answers, so reads see them at once (${INGESTION_LOG_ENV.waitForStore}). Default ${ENV_DEFAULTS.ingestionLogWaitForStore}.`,
            }),
          ),
          backlogMaxAgeSeconds: optional(
            integer({
              description: `Age in seconds of the oldest undrained write past which the write routes answer 429 with Retry-After (${INGESTION_LOG_ENV.backlogMaxAgeSeconds}); default ${ENV_DEFAULTS.ingestionBacklogMaxAgeSeconds}.`,
              minimum: ENV_LIMITS.ingestionBacklogMaxAgeSeconds.min,
              maximum: ENV_LIMITS.ingestionBacklogMaxAgeSeconds.max,
              format: 'int32',
            }),
          ),
          backlogMaxBytes: optional(
            integer({
              description: `Undrained bytes past which the write routes answer 429 with Retry-After (${INGESTION_LOG_ENV.backlogMaxBytes}); default ${ENV_DEFAULTS.ingestionBacklogMaxBytes} (10 GiB).`,
              minimum: ENV_LIMITS.ingestionBacklogMaxBytes.min,
              maximum: ENV_LIMITS.ingestionBacklogMaxBytes.max,
              format: 'int64',
            }),
          ),
          retentionHours: optional(
            integer({
              description: `Hours a drained log file is kept for \`observatory ingestion replay\` before the workers delete it (${INGESTION_LOG_ENV.retentionHours}); default ${ENV_DEFAULTS.ingestionLogRetentionHours}, at least ${ENV_LIMITS.ingestionLogRetentionHours.min} (above the sweeper's day).`,
              minimum: ENV_LIMITS.ingestionLogRetentionHours.min,
              maximum: ENV_LIMITS.ingestionLogRetentionHours.max,
              format: 'int32',
            }),
          ),
          drainLeaseSeconds: optional(
            integer({
              description: `Seconds a worker holds the log files it claimed; a worker that died leaves them to another after this (${INGESTION_LOG_ENV.drainLeaseSeconds}); default ${ENV_DEFAULTS.ingestionLogDrainLeaseSeconds}.`,
              minimum: ENV_LIMITS.ingestionLogDrainLeaseSeconds.min,
              maximum: ENV_LIMITS.ingestionLogDrainLeaseSeconds.max,
              format: 'int32',
            }),
          ),
        },
        {
          description:
            'The ingestion log (web and worker Pods, and the restore Job): every accepted write is stored here, and queued in PostgreSQL, before the web answers; the workers drain it into the analytics store, and a restore replays the writes accepted after its backup. Unset: the web writes the analytics store directly.',
          validations: [BLOB_CREDENTIALS_RULE],
        },
      ),
    ),
  },
  {
    description:
      'S3-compatible blob storage, one bucket setting per purpose; credentials come only from Secrets. Unset: no blob storage.',
  },
);

/** Backups kept in status.backups (and as ConfigMaps), newest first. */
export const MAX_BACKUPS_RECORDED = 10;

const backup = object(
  {
    destination: object(s3Fields(BACKUP_S3_ENV), {
      description:
        'The bucket the backup Jobs write to and the restore Job reads from (one folder per backup id under the prefix). Only the backup and restore Jobs receive it.',
      validations: [BLOB_CREDENTIALS_RULE],
    }),
    include: defaulted(
      array(enumOf(BACKUP_PARTS, { description: 'A database to back up.' }), {
        description:
          'What each backup covers: analytics (ClickHouse BACKUP DATABASE ... TO S3) and relational (pg_dump, custom format). Default both.',
        maxItems: BACKUP_PARTS.length,
        listType: 'set',
        validations: [
          {
            rule: 'size(self) >= 1',
            message: 'spec.backup.include must name at least one of analytics, relational',
            reason: 'FieldValueRequired',
          },
        ],
      }),
      [...BACKUP_PARTS],
    ),
    schedule: optional(
      string({
        description:
          'When scheduled backups are taken, as a cron expression in UTC (5 fields, or 6 with seconds first; e.g. "0 3 * * *" daily at 03:00). With spec.maintenanceWindows, a backup due outside them is taken when the next window opens. Missed times are not caught up one by one: the latest due one is taken. Paused while hibernated.',
        maxLength: 128,
        minLength: 9,
        pattern: '^\\S+( +\\S+){4,5}$',
      }),
    ),
    retention: optional(
      object(
        {
          keepLast: optional(
            integer({
              description: 'Keep the newest N complete backups.',
              minimum: KEEP_LAST_LIMITS.min,
              maximum: KEEP_LAST_LIMITS.max,
              format: 'int32',
            }),
          ),
          maxAge: optional(duration('Keep the complete backups younger than this (e.g. 30d).')),
        },
        {
          description:
            'Which complete backups in the destination (every trigger, both databases of each) a prune keeps after each scheduled backup: those kept by either rule, the newest whatever its age, and those a restore or a pass in progress still needs. The others are deleted by a Job (observatory backup-prune). Unset: none is deleted.',
          validations: [
            {
              rule: 'has(self.keepLast) || has(self.maxAge)',
              message: 'spec.backup.retention must set keepLast, maxAge or both',
              reason: 'FieldValueRequired',
            },
          ],
        },
      ),
    ),
    verify: optional(
      object(
        {
          schedule: optional(
            string({
              description:
                'When the latest complete backup is verified, as a cron expression in UTC (e.g. "0 4 * * 0" weekly, Sundays at 04:00). Missed times are not caught up one by one. Paused while hibernated.',
              maxLength: 128,
              minLength: 9,
              pattern: '^\\S+( +\\S+){4,5}$',
            }),
          ),
          afterEveryBackups: optional(
            integer({
              description:
                'Verify the latest complete backup after every N complete backups (any trigger) the operator records.',
              minimum: VERIFY_EVERY_LIMITS.min,
              maximum: VERIFY_EVERY_LIMITS.max,
              format: 'int32',
            }),
          ),
        },
        {
          description:
            "Backups proven by restoring them: a Job (observatory backup-verify) restores the latest complete backup into scratch databases on the same servers (<database>_verify, dropped afterwards), compares every table's rows and checksums with its manifest, and records the verdict in status.backupVerification and the BackupVerified condition. It never runs beside a restore, a backup or a prune, and retention keeps the backup under verification.",
          validations: [
            {
              rule: 'has(self.schedule) || has(self.afterEveryBackups)',
              message: 'spec.backup.verify must set schedule, afterEveryBackups or both',
              reason: 'FieldValueRequired',
            },
          ],
        },
      ),
    ),
    ttlSecondsAfterFinished: optional(
      integer({
        description: `Seconds a finished backup or restore Job is kept (its summary is in status.backups either way); default spec.jobs.ttlSecondsAfterFinished. At least ${JOB_TTL_LIMITS.min}, so the operator reads the summary first.`,
        minimum: JOB_TTL_LIMITS.min,
        maximum: JOB_TTL_LIMITS.max,
        format: 'int32',
      }),
    ),
  },
  {
    description:
      'Backups taken by the operator as Jobs: before the schema move from release "3" to "4" (unless spec.upgrade.backupConfirmed says one was taken), before the cutover to EventsOnly, on request (annotation observatory.dev/backup-requested, or kubectl observatory backup now) and on spec.backup.schedule, with spec.backup.retention applied after each scheduled one. The step after a backup starts only once its Job reported a complete, verified backup. Unset: no backups; moving release "3" to "4" then needs spec.upgrade.backupConfirmed.',
  },
);

const resources = object(
  {
    requests: optional(
      map(quantity({ description: 'A quantity, e.g. 500m or 1Gi.' }), {
        description: 'Minimum compute resources (cpu, memory, ...).',
        maxProperties: 8,
      }),
    ),
    limits: optional(
      map(quantity({ description: 'A quantity, e.g. 500m or 1Gi.' }), {
        description: 'Maximum compute resources (cpu, memory, ...).',
        maxProperties: 8,
      }),
    ),
  },
  { description: 'Compute resources of each container, as in a Pod spec.' },
);

const disruptionBudget = (name: string) =>
  object(
    {
      enabled: optional(
        boolean({
          description: `Keep a PodDisruptionBudget for the ${name} Pods. Unset means on when replicas > 1 (a budget over one Pod would block every node drain).`,
        }),
      ),
      minAvailable: optional(
        intOrPercent({
          description: 'Pods that must stay available during a voluntary disruption (e.g. 1 or 50%).',
        }),
      ),
      maxUnavailable: optional(
        intOrPercent({
          description:
            'Pods a voluntary disruption may take at once (e.g. 1 or 25%). Default when neither is set: maxUnavailable 1.',
        }),
      ),
    },
    {
      description: `PodDisruptionBudget of the ${name} Pods (<name>-${name}), so a node drain never takes them all at once.`,
      validations: [
        {
          rule: '!(has(self.minAvailable) && has(self.maxUnavailable))',
          message: 'set at most one of minAvailable and maxUnavailable',
          reason: 'FieldValueForbidden',
        },
      ],
    },
  );

const networkPolicy = object(
  {
    enabled: defaulted(
      boolean({
        description:
          'Keep the NetworkPolicies. Off by default: a policy that does not fit the cluster (its ingress controller, its monitoring) cuts traffic.',
      }),
      false,
    ),
    ingressFrom: optional(
      array(
        opaque<V1NetworkPolicyPeer>({
          description:
            'A core networking/v1 NetworkPolicyPeer (podSelector, namespaceSelector, ipBlock), validated by the API server when the policy is applied.',
        }),
        {
          description: `Who may reach the web's ports (${PORTS.web} and OTLP/gRPC ${OTLP_GRPC_PORT}). Unset or empty: anywhere, as the web is the public ingestion endpoint.`,
          maxItems: 16,
          listType: 'atomic',
        },
      ),
    ),
  },
  {
    description: `Ingress NetworkPolicies <name>-web and <name>-worker, owned by this object: the web takes its HTTP port ${PORTS.web} and OTLP/gRPC ${OTLP_GRPC_PORT} from ingressFrom; the worker takes its port ${PORTS.worker} only from the operator's Pods and this object's own Pods. Egress is left alone (the datastores are outside).`,
  },
);

/** Bounds of a role's replica count, fixed or autoscaled. */
export const REPLICA_LIMITS = { min: 1, max: 100 } as const;

const roleFields = (name: string) => ({
  replicas: defaulted(
    integer({
      description: `Number of ${name} pods.`,
      minimum: REPLICA_LIMITS.min,
      maximum: REPLICA_LIMITS.max,
      format: 'int32',
    }),
    1,
  ),
  resources: optional(resources),
  podDisruptionBudget: optional(disruptionBudget(name)),
  template: optional(podTemplate(name)),
});

/**
 * The worker autoscaler's defaults: a target well inside the web's 429 bound, and HPA's own
 * scale-down stabilization window (five minutes).
 */
export const AUTOSCALING_DEFAULTS = {
  minReplicas: 1,
  targetBacklogAgeSeconds: 30,
  scaleDownStabilizationSeconds: 300,
} as const;
export const SCALE_DOWN_STABILIZATION_LIMITS = { min: 0, max: 3600 } as const;
/** Up to the longest 429 bound the server takes; the rule on .spec keeps it below the one set. */
export const TARGET_BACKLOG_AGE_LIMITS = {
  min: 1,
  max: ENV_LIMITS.ingestionBacklogMaxAgeSeconds.max,
} as const;

const replicaCount = (description: string) =>
  integer({ description, minimum: REPLICA_LIMITS.min, maximum: REPLICA_LIMITS.max, format: 'int32' });

/** minReplicas and maxReplicas are both present here (one defaulted, one required). */
export const AUTOSCALING_BOUNDS_RULE: CelRule = {
  rule: '!has(self.minReplicas) || self.minReplicas <= self.maxReplicas',
  message: 'spec.worker.autoscaling.minReplicas must be at most spec.worker.autoscaling.maxReplicas',
  fieldPath: '.minReplicas',
  reason: 'FieldValueInvalid',
};

const autoscaling = object(
  {
    enabled: boolean({
      description:
        "Scale the worker Deployment on the age of the ingestion log's oldest undrained write (needs spec.blobStorage.ingestionLog). While enabled, spec.worker.replicas is only where the autoscaler starts.",
    }),
    minReplicas: defaulted(
      replicaCount('Fewest worker pods; the count once the backlog is gone.'),
      AUTOSCALING_DEFAULTS.minReplicas,
    ),
    maxReplicas: replicaCount('Most worker pods.'),
    targetBacklogAgeSeconds: defaulted(
      integer({
        description: `Age in seconds of the oldest undrained write above which workers are added (about in proportion, at most doubling per step); at most half of it counts as a drained backlog. Must stay below the 429 bound spec.blobStorage.ingestionLog.backlogMaxAgeSeconds (default ${ENV_DEFAULTS.ingestionBacklogMaxAgeSeconds}).`,
        minimum: TARGET_BACKLOG_AGE_LIMITS.min,
        maximum: TARGET_BACKLOG_AGE_LIMITS.max,
        format: 'int32',
      }),
      AUTOSCALING_DEFAULTS.targetBacklogAgeSeconds,
    ),
    scaleDownStabilizationSeconds: defaulted(
      integer({
        description:
          "Seconds the backlog must stay drained before workers are removed, and then down to the most the window's observations asked for (as an HPA's scaleDown.stabilizationWindowSeconds).",
        minimum: SCALE_DOWN_STABILIZATION_LIMITS.min,
        maximum: SCALE_DOWN_STABILIZATION_LIMITS.max,
        format: 'int32',
      }),
      AUTOSCALING_DEFAULTS.scaleDownStabilizationSeconds,
    ),
  },
  {
    description:
      "Worker autoscaling on the ingestion log's backlog: the operator reads the queue from a worker (GET /api/ingestion/backlog) and sets the Deployment's replicas, never while a pass or a restore needs them fixed. Reported in status.autoscaling and as an Event on each scale.",
    validations: [AUTOSCALING_BOUNDS_RULE],
  },
);

const workerRole = object(
  {
    ...roleFields('worker'),
    replicas: defaulted(
      replicaCount(
        'Number of worker pods; with autoscaling.enabled only where the autoscaler starts (clamped into its bounds).',
      ),
      1,
    ),
    autoscaling: optional(autoscaling),
  },
  { description: 'The worker Deployment.' },
);

const webRole = object(
  {
    ...roleFields('web'),
    maxInFlightWrites: defaulted(
      integer({
        description:
          'Concurrent ingestion requests one web Pod serves before answering 429 (SERVICE_INGESTION_MAX_IN_FLIGHT).',
        minimum: ENV_LIMITS.maxInFlightWrites.min,
        maximum: ENV_LIMITS.maxInFlightWrites.max,
        format: 'int32',
      }),
      ENV_DEFAULTS.maxInFlightWrites,
    ),
  },
  { description: 'The web Deployment.' },
);

export const specSchema = object(
  {
    release: enumOf(RELEASES, {
      description:
        'Server release line to run: "3" (legacy data model) or "4" (observations first). Moving "3" to "4" needs spec.backup or upgrade.backupConfirmed; moving back to "3" is possible until the cutover to EventsOnly.',
    }),
    image: string({
      description: 'Container image for every role (web, worker and the Jobs), e.g. observatory:dev.',
      maxLength: 512,
      minLength: 1,
    }),
    imagePullPolicy: defaulted(
      enumOf(PULL_POLICIES, { description: 'Image pull policy of every container.' }),
      'IfNotPresent',
    ),
    writeMode: optional(
      enumOf(WRITE_MODES, {
        description:
          'Desired write mode of release "4": Legacy (old tables only), Dual (old and new tables), EventsOnly (new tables only; the point of commitment, never left once set). The operator moves one step at a time and records the observed mode in status.state. Required for release "4"; unset or Legacy for release "3".',
      }),
    ),
    nativeOtelBehaviour: optional(
      enumOf(OTEL_BEHAVIOURS, {
        description:
          'How native OpenTelemetry spans are written in Dual: DualWrite (through the staging pipeline unless the producer propagates client-side) or Direct. EventsOnly requires Direct; Legacy writes no events table and takes either; unset means DualWrite in Dual and Direct otherwise.',
      }),
    ),
    allowPreviewOptIn: defaulted(
      boolean({
        description:
          'Serve the version 4 read paths (per-user preview, v2 APIs) in Dual. Must be true for EventsOnly.',
      }),
      true,
    ),
    backfill: optional(
      object(
        {
          enabled: optional(
            boolean({
              description:
                'Run the historic backfill (one Job per step, after the Dual rollout completed on every pod). Unset means false in Legacy (where it is forbidden) and true otherwise.',
            }),
          ),
          dropScratchTables: defaulted(
            boolean({
              description: 'Also run step 5, which drops the scratch table observations_pid_tid_sorting.',
            }),
            false,
          ),
          chunkRows: defaulted(
            integer({
              description: `Rows per chunk, one INSERT ... SELECT each (${BACKFILL_ENV.chunkRows}); larger chunks run faster and take more memory in the analytics store. Applies to steps whose chunks are not planned yet.`,
              minimum: BACKFILL_LIMITS.chunkRows.min,
              maximum: BACKFILL_LIMITS.chunkRows.max,
              format: 'int32',
            }),
            BACKFILL_DEFAULTS.chunkRows,
          ),
          throttleMs: defaulted(
            integer({
              description: `Pause after each chunk in milliseconds (${BACKFILL_ENV.throttleMs}), leaving the analytics store room for live traffic.`,
              minimum: BACKFILL_LIMITS.throttleMs.min,
              maximum: BACKFILL_LIMITS.throttleMs.max,
              format: 'int32',
            }),
            BACKFILL_DEFAULTS.throttleMs,
          ),
          concurrency: defaulted(
            integer({
              description: `Chunks of one step in flight at once (${BACKFILL_ENV.concurrency}).`,
              minimum: BACKFILL_LIMITS.concurrency.min,
              maximum: BACKFILL_LIMITS.concurrency.max,
              format: 'int32',
            }),
            BACKFILL_DEFAULTS.concurrency,
          ),
        },
        {
          description:
            "The historic backfill that copies data written before dual write into the new tables, and its tuning (rendered into each backfill Job, which writes it into the step's background_migrations row).",
          validations: [BACKFILL_WIDTH_RULE],
        },
      ),
    ),
    propagation: defaulted(
      object(
        {
          stuckThresholdMinutes: defaulted(
            integer({
              description:
                'Minutes without progress after which the dual-write propagation counts as stuck (worker health probe fails in Dual).',
              minimum: 1,
              maximum: 10080,
              format: 'int32',
            }),
            15,
          ),
          failureThreshold: defaulted(
            integer({
              description:
                'Consecutive probes in which a worker answers stuck before PropagationHealthy turns False (and without a definite answer before it turns Unknown), like a kubelet probe failureThreshold. One healthy answer turns it True.',
              minimum: 1,
              maximum: 100,
              format: 'int32',
            }),
            3,
          ),
          intervalSeconds: defaulted(
            integer({
              description:
                'Seconds between two propagation runs of the worker (SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS).',
              minimum: ENV_LIMITS.propagationIntervalSeconds.min,
              maximum: ENV_LIMITS.propagationIntervalSeconds.max,
              format: 'int32',
            }),
            ENV_DEFAULTS.propagationIntervalSeconds,
          ),
          graceSeconds: defaulted(
            integer({
              description:
                'Seconds a staged row waits before it is propagated, so late writes of the same batch join it (SERVICE_EVENT_PROPAGATION_GRACE_SECONDS).',
              minimum: ENV_LIMITS.propagationGraceSeconds.min,
              maximum: ENV_LIMITS.propagationGraceSeconds.max,
              format: 'int32',
            }),
            ENV_DEFAULTS.propagationGraceSeconds,
          ),
          chunkRows: defaulted(
            integer({
              description: `Rows of a staging partition per propagation INSERT ... SELECT (${ENV.propagationChunkRows}); a larger partition is propagated in chunks of whole traces, each committed and resumed after a restart. Larger chunks run faster and take more memory in the analytics store.`,
              minimum: ENV_LIMITS.propagationChunkRows.min,
              maximum: ENV_LIMITS.propagationChunkRows.max,
              format: 'int32',
            }),
            ENV_DEFAULTS.propagationChunkRows,
          ),
        },
        { description: 'Dual-write propagation settings.' },
      ),
      {},
    ),
    cutover: defaulted(
      object(
        {
          approval: defaulted(
            enumOf(APPROVALS, {
              description:
                'Manual: the cutover to EventsOnly waits for approvedGeneration or the annotation observatory.dev/approve-cutover naming the current generation. Automatic: it proceeds when the other gates hold.',
            }),
            'Manual',
          ),
          approvedGeneration: optional(
            integer({
              description:
                'The metadata.generation whose cutover is approved (Manual approval). An approval is valid for the generation shown in status.approval.specGeneration and later ones, up to the current generation.',
              minimum: 1,
              format: 'int64',
            }),
          ),
          retentionWindow: optional(
            duration(
              'Having dual-written for this long (e.g. 30d, your data retention) stands in for the historic backfill when it is disabled or incomplete.',
            ),
          ),
          producerQuietPeriod: defaulted(
            duration(
              'No producer that EventsOnly would refuse (old SDKs, legacy endpoints) may have been seen for this long before the cutover.',
            ),
            '24h',
          ),
        },
        { description: 'Gates of the cutover from Dual to EventsOnly.' },
      ),
      {},
    ),
    upgrade: optional(
      object(
        {
          backupConfirmed: defaulted(
            boolean({
              description:
                'Confirms that the relational and analytics databases were backed up just before moving release "3" to "4": required for that move without spec.backup, and with spec.backup it skips the backup the operator would take before it.',
            }),
            false,
          ),
        },
        { description: 'Confirmations for the move from release "3" to "4".' },
      ),
    ),
    datastores: object(
      {
        postgres: object(
          { urlSecretRef: secretKeyRef('the PostgreSQL URL (DATABASE_URL)') },
          { description: 'The relational database.' },
        ),
        clickhouse: object(
          {
            urlSecretRef: secretKeyRef('the ClickHouse URL (CLICKHOUSE_URL)'),
            userSecretRef: optional(secretKeyRef('the ClickHouse user (CLICKHOUSE_USER)')),
            passwordSecretRef: optional(secretKeyRef('the ClickHouse password (CLICKHOUSE_PASSWORD)')),
            database: optional(
              string({
                description: 'ClickHouse database (CLICKHOUSE_DB); default "default".',
                maxLength: 128,
              }),
            ),
            clusterEnabled: optional(
              boolean({ description: 'Clustered ClickHouse deployment (COLUMNAR_CLUSTER_ENABLED).' }),
            ),
            clusterName: optional(
              string({
                description:
                  'Name of the ClickHouse cluster the DDL runs ON CLUSTER (COLUMNAR_CLUSTER_NAME); only with clusterEnabled, default "default".',
                maxLength: 128,
                minLength: 1,
                pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
              }),
            ),
            useLightweightUpdate: optional(
              boolean({
                description:
                  'Rewrite rows with lightweight UPDATE instead of mutations (COLUMNAR_USE_LIGHTWEIGHT_UPDATE); default false.',
              }),
            ),
          },
          {
            description: 'The columnar analytics database.',
            validations: [
              {
                rule: '!has(self.clusterName) || (has(self.clusterEnabled) && self.clusterEnabled)',
                message: 'clusterName is used only with clusterEnabled: true',
                fieldPath: '.clusterName',
                reason: 'FieldValueForbidden',
              },
            ],
          },
        ),
        redis: object(
          { urlSecretRef: secretKeyRef('the Redis URL (REDIS_URL)') },
          { description: 'The cache and queue store.' },
        ),
      },
      { description: 'Connection settings of the datastores, taken only from Secrets.' },
    ),
    blobStorage: optional(blobStorage),
    backup: optional(backup),
    web: defaulted(webRole, {}),
    worker: defaulted(workerRole, {}),
    networkPolicy: optional(networkPolicy),
    jobs: optional(
      object(
        {
          resources: optional(resources),
          template: optional(podTemplate('Job')),
          ttlSecondsAfterFinished: defaulted(
            integer({
              description: `Seconds a finished Job (and its Pods and logs) is kept before Kubernetes deletes it; its result stays in status.jobs. At least ${JOB_TTL_LIMITS.min}, so the operator reads the result first.`,
              minimum: JOB_TTL_LIMITS.min,
              maximum: JOB_TTL_LIMITS.max,
              format: 'int32',
            }),
            DEFAULT_JOB_TTL_SECONDS,
          ),
        },
        { description: 'The Pods of the Jobs the operator runs (preflight, schema, backfill, cleanup).' },
      ),
    ),
    logLevel: defaulted(
      enumOf(LOG_LEVELS, { description: 'Log level of every role (LOG_LEVEL).' }),
      ENV_DEFAULTS.logLevel,
    ),
    maintenanceWindows: optional(
      array(
        object(
          {
            cron: string({
              description:
                'When a window opens, as a cron expression in UTC (5 fields, or 6 with seconds first; e.g. "0 2 * * 6" for Saturdays 02:00).',
              maxLength: 128,
              minLength: 9,
              pattern: '^\\S+( +\\S+){4,5}$',
            }),
            duration: duration('How long the window stays open, above 0s and at most 7d (e.g. 4h, 1h30m).'),
          },
          { description: 'A window that opens on a cron schedule (UTC) and stays open for a duration.' },
        ),
        {
          description:
            'When set, the operator starts a backfill step, a move to another write mode (the cutover included) and the cleanup only inside one of these windows, and says so in status.blockedBy otherwise; what already runs goes on. An image upgrade is held like a move; a rollback to release "3" is not. Unset: any time.',
          maxItems: 8,
        },
      ),
    ),
    paused: defaulted(
      boolean({ description: 'Stop every change (status is still written, with the Paused condition).' }),
      false,
    ),
    hibernate: defaulted(
      boolean({
        description:
          'Park the deployment: web and worker drain and scale to zero (the web first; with an ingestion log the workers drain its backlog, for at most 10 minutes, before they stop), a running backfill step stops at its last recorded chunk, and scheduled work (backfill, scheduled backups) pauses. Datastores, settings, the write mode and the backfill cursor are kept; false wakes the deployment into exactly that state. Refused while the cutover to EventsOnly is in progress. Status: the Hibernated condition and phase.',
      }),
      false,
    ),
    cleanup: optional(
      object(
        {
          truncateLegacyTables: defaulted(
            boolean({
              description:
                'After the cutover, truncate (never drop) the analytics tables traces and observations. Irreversible: removes the backfill source and the last way back to a version 3 read path. Only with EventsOnly.',
            }),
            false,
          ),
        },
        { description: 'Optional cleanup after the cutover.' },
      ),
    ),
  },
  {
    description: 'Desired state of the service: release, write mode, gates and workload settings.',
    validations: specRules,
  },
);

const condition = object(
  {
    type: string({ description: 'Type of condition in CamelCase.', maxLength: 316 }),
    status: enumOf(['True', 'False', 'Unknown'] as const, { description: 'Status of the condition.' }),
    observedGeneration: optional(
      integer({
        description: 'The metadata.generation the condition was computed from.',
        minimum: 0,
        format: 'int64',
      }),
    ),
    lastTransitionTime: string({
      description: 'Last time the status changed.',
      maxLength: 64,
      format: 'date-time',
    }),
    reason: string({
      description: 'Machine-readable reason in CamelCase.',
      maxLength: 1024,
      minLength: 1,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    }),
    message: string({ description: 'Human-readable details.', maxLength: 32768 }),
  },
  { description: 'A metav1.Condition.' },
);

const stateEnum = (description: string) => enumOf(MIGRATION_STATES, { description });
const timestamp = (description: string) => string({ description, maxLength: 64, format: 'date-time' });

/**
 * The mode settings a state runs with, recorded when the state is entered (or its cutover
 * approved) and rendered from that record while the spec asks for another state: a requested but
 * unapproved change reaches no Pod.
 */
const recordedSettings = (of: string) =>
  object(
    {
      writeMode: enumOf(WRITE_MODES, { description: 'The write mode (the state itself).' }),
      nativeOtelBehaviour: enumOf(OTEL_BEHAVIOURS, { description: 'OTel ingestion behaviour.' }),
      allowPreviewOptIn: boolean({ description: 'Preview opt-in allowed.' }),
      historicBackfill: boolean({ description: 'The historic backfill switch.' }),
      dropScratchTables: boolean({ description: 'Drop the backfill scratch tables.' }),
    },
    {
      description: `The settings ${of} runs with in web, worker and Jobs, recorded when it was entered or approved; rendered from here while spec asks for another state.`,
    },
  );

const jobResult = object(
  {
    purpose: string({ description: 'The Job purpose (preflight, migrate, backfill-2, ...).', maxLength: 64 }),
    name: string({ description: 'The Job of that attempt.', maxLength: 253 }),
    result: enumOf(['Succeeded', 'Failed'] as const, { description: "The Job's terminal condition." }),
    observedAt: timestamp('When the operator first saw the result.'),
    reason: optional(string({ description: 'Reason of the Failed condition.', maxLength: 256 })),
    message: optional(string({ description: 'Message of the Failed condition.', maxLength: 1024 })),
  },
  { description: "One finished Job's result." },
);

/** Why the autoscaler keeps or changes the worker count (status.autoscaling.reason). */
export const AUTOSCALING_REASONS = [
  'ScaledUp',
  'ScaledDown',
  'BacklogWithinTarget',
  'ScaleUpPending',
  'AtMaxReplicas',
  'StabilizingScaleDown',
  'BacklogUnknown',
  'Held',
] as const;

const autoscalingStatus = object(
  {
    currentReplicas: integer({
      description: 'Worker pods the Deployment reported at the last decision.',
      minimum: 0,
      format: 'int32',
    }),
    desiredReplicas: integer({
      description: 'Worker pods decided (the Deployment is rendered with this count).',
      minimum: 0,
      format: 'int32',
    }),
    lastBacklogAgeSeconds: optional(
      integer({
        description: "Age in seconds of the oldest undrained write at the last worker's answer.",
        minimum: 0,
        format: 'int64',
      }),
    ),
    lastScaleTime: optional(timestamp('When desiredReplicas last changed.')),
    reason: enumOf(AUTOSCALING_REASONS, { description: 'Why the count is what it is.' }),
    message: string({ description: 'The decision in words.', maxLength: 1024 }),
    scaleDownSince: optional(
      timestamp('Since when every observation asked for fewer workers (the stabilization window).'),
    ),
    scaleDownTo: optional(
      integer({
        description: 'The most workers any observation of the window asked for: where the scale-down goes.',
        minimum: 0,
        format: 'int32',
      }),
    ),
  },
  { description: 'The worker autoscaler (spec.worker.autoscaling): its last observation and decision.' },
);

export const BACKUP_TRIGGERS = ['Release4', 'Cutover', 'Upgrade', 'Requested', 'Scheduled'] as const;
export const BACKUP_RESULTS = ['Complete', 'Failed'] as const;
export const RESTORE_PHASES = ['ScalingDown', 'Restoring', 'Complete', 'Failed'] as const;

const backupId = (description: string) =>
  string({ description, maxLength: 63, minLength: 1, pattern: BACKUP_ID_PATTERN });

const backupRecord = object(
  {
    id: backupId('The backup id: its folder in the bucket and the label of its ConfigMap.'),
    trigger: enumOf(BACKUP_TRIGGERS, {
      description:
        'Why it was taken: before the move to release 4, before the cutover, before an image upgrade within release 4, on request, or on spec.backup.schedule.',
    }),
    result: enumOf(BACKUP_RESULTS, {
      description: 'Complete: the Job succeeded and its summary parsed (verified). Failed: neither counts.',
    }),
    job: string({ description: 'The Job that took it.', maxLength: 253 }),
    parts: optional(
      array(
        object(
          {
            part: enumOf(BACKUP_PARTS, { description: 'The database.' }),
            objects: integer({
              description: 'Objects read back from the bucket.',
              minimum: 0,
              format: 'int64',
            }),
            bytes: integer({ description: 'Bytes read back from the bucket.', minimum: 0, format: 'int64' }),
          },
          { description: 'One database in the backup.' },
        ),
        { description: 'What the backup covers, as verified by its Job.', maxItems: BACKUP_PARTS.length },
      ),
    ),
    objects: optional(integer({ description: 'Objects of all parts.', minimum: 0, format: 'int64' })),
    bytes: optional(integer({ description: 'Bytes of all parts.', minimum: 0, format: 'int64' })),
    startedAt: optional(timestamp('When the Job started the backup.')),
    finishedAt: optional(timestamp('When the backup was verified complete.')),
    release: optional(enumOf(RELEASES, { description: 'The release running when it was taken.' })),
    writeMode: optional(enumOf(WRITE_MODES, { description: 'The write mode running when it was taken.' })),
    message: optional(string({ description: 'Why it failed.', maxLength: 1024 })),
  },
  { description: 'One backup the operator ran.' },
);

const restoreRecord = object(
  {
    request: string({
      description: 'The observatory.dev/restore-requested value acted on ("<id>" or "<id>.<n>").',
      maxLength: 70,
    }),
    backupId: backupId('The backup restored.'),
    phase: enumOf(RESTORE_PHASES, {
      description: 'ScalingDown (web and worker to zero), Restoring (the Job runs), Complete or Failed.',
    }),
    since: timestamp('When the restore was accepted.'),
    finishedAt: optional(timestamp('When it completed or failed.')),
    release: enumOf(RELEASES, { description: 'The release of the backup, which the deployment returns to.' }),
    writeMode: enumOf(WRITE_MODES, {
      description: 'The write mode of the backup, which the deployment returns to.',
    }),
    job: optional(string({ description: 'The restore Job.', maxLength: 253 })),
    replay: optional(
      object(
        {
          from: timestamp("The first acceptance time replayed: the backup's replay point."),
          to: timestamp('The end of the window: when the restore ran.'),
          files: integer({ description: 'Log files in the window.', minimum: 0, format: 'int64' }),
          written: integer({
            description: 'Files written to the analytics store again.',
            minimum: 0,
            format: 'int64',
          }),
          unreadable: integer({
            description: 'Files that could not be read (missing, or not log entries), left out.',
            minimum: 0,
            format: 'int64',
          }),
          warnings: integer({
            description:
              "What the replay could not bring back (e.g. writes past the log's retention); the Job's log says what.",
            minimum: 0,
            format: 'int64',
          }),
        },
        {
          description:
            "The replay of the ingestion log after the backup (with spec.ingestionLog), from the restore Job's summary.",
        },
      ),
    ),
  },
  { description: 'The latest restore requested (observatory.dev/restore-requested).' },
);

const backupSchedule = object(
  {
    since: timestamp(
      'When the operator first read spec.backup.schedule (a backup is due from its next time on).',
    ),
    lastScheduleTime: optional(timestamp('The latest scheduled time a backup was taken (or tried) for.')),
    pending: optional(
      object(
        {
          scheduledAt: timestamp('The scheduled time it is for.'),
          id: backupId('Its id (derived from the scheduled time).'),
        },
        { description: 'The scheduled backup in progress, recorded before its Job is created.' },
      ),
    ),
    nextScheduleTime: optional(
      timestamp('When the next scheduled backup is due (the next window opening when a window holds it).'),
    ),
    lastSuccessful: optional(
      object(
        {
          id: backupId('The backup.'),
          finishedAt: timestamp('When it was verified complete.'),
        },
        { description: 'The latest complete scheduled backup.' },
      ),
    ),
    allowedAgeSeconds: optional(
      integer({
        description:
          'Age past which the latest successful backup counts as overdue: twice the longest gap of the schedule, plus the longest wait for a maintenance window, plus an hour (the ObservatoryBackupOverdue alert).',
        minimum: 0,
        format: 'int64',
      }),
    ),
    kept: optional(
      integer({ description: 'Complete backups in the destination after the last prune.', minimum: 0 }),
    ),
    prune: optional(
      object(
        {
          after: backupId('The scheduled backup the prune follows (names its Job).'),
          result: optional(enumOf(['Succeeded', 'Failed'] as const, { description: 'How it ended.' })),
          finishedAt: optional(timestamp('When its result was read.')),
          deleted: optional(integer({ description: 'Backups it deleted.', minimum: 0, format: 'int32' })),
          message: optional(string({ description: 'Why it failed.', maxLength: 1024 })),
        },
        { description: 'The latest retention run (observatory backup-prune).' },
      ),
    ),
  },
  { description: 'Scheduled backups (spec.backup.schedule) and their retention.' },
);

const backupVerification = object(
  {
    since: timestamp(
      'When the operator first read spec.backup.verify (a scheduled verification is due from its next time on).',
    ),
    lastScheduleTime: optional(timestamp('The latest scheduled time a verification was run (or tried) for.')),
    countedUntil: optional(
      timestamp('The finish time of the newest complete backup counted towards afterEveryBackups.'),
    ),
    backupsSince: optional(
      integer({
        description: 'Complete backups recorded since the latest verification started.',
        minimum: 0,
        format: 'int32',
      }),
    ),
    pending: optional(
      object(
        {
          id: backupId('The backup under verification (retention keeps it).'),
          since: timestamp('When the verification was recorded, before its Job was created.'),
        },
        { description: 'The verification in progress.' },
      ),
    ),
    last: optional(
      object(
        {
          id: backupId('The backup verified.'),
          result: enumOf([...VERIFY_RESULTS, 'Failed'] as const, {
            description:
              'The verdict: Verified, Differs (a table differs from the manifest), RowsNotRecorded (a backup older than per-table records), or Failed (the Job could not verify).',
          }),
          finishedAt: timestamp('When the verdict was read.'),
          tables: optional(integer({ description: 'Tables compared.', minimum: 0, format: 'int32' })),
          analyticsRows: optional(
            integer({ description: 'Rows restored into the scratch analytics database.', minimum: 0 }),
          ),
          relationalRows: optional(
            integer({ description: 'Rows restored into the scratch relational database.', minimum: 0 }),
          ),
          message: optional(
            string({ description: 'The first difference, or why the Job failed.', maxLength: 1024 }),
          ),
        },
        { description: 'The latest verification that finished.' },
      ),
    ),
  },
  { description: 'Backup verification (spec.backup.verify).' },
);

export const HIBERNATION_PHASES = ['Draining', 'Hibernated', 'Waking'] as const;

const hibernationRecord = object(
  {
    phase: enumOf(HIBERNATION_PHASES, {
      description:
        'Draining (web and worker on their way to zero), Hibernated (no Pod left) or Waking (web and worker rolling out again in the recorded state).',
    }),
    since: timestamp('When the hibernation was recorded (the drain started).'),
    hibernatedAt: optional(timestamp('When the last web and worker Pod was gone.')),
    stoppedJob: optional(
      string({
        description: 'The backfill Job stopped by the hibernation; its step resumes on wake.',
        maxLength: 253,
      }),
    ),
  },
  {
    description:
      'The hibernation in progress (spec.hibernate): recorded before web and worker are scaled down, removed once they are back after the wake.',
  },
);

export const statusSchema = object(
  {
    observedGeneration: optional(
      integer({ description: 'The metadata.generation last reconciled.', minimum: 0, format: 'int64' }),
    ),
    state: optional(
      stateEnum(
        'Observed migration state: advanced only at the end of a fully successful pass (Jobs done, both Deployments rolled out).',
      ),
    ),
    target: optional(
      object(
        {
          state: stateEnum('The state the operator is moving to; recorded before acting.'),
          since: timestamp(
            'When the intent was recorded (also names the pass, so each pass has its own Jobs).',
          ),
          image: string({ description: 'Image the pass rolls out.', maxLength: 512 }),
          preflightPassed: optional(boolean({ description: 'The preflight Job of this pass succeeded.' })),
          schemaMigrated: optional(
            boolean({ description: 'The schema Job (migrate or rollback) of this pass succeeded.' }),
          ),
          schemaStarted: optional(
            boolean({
              description:
                'The schema Job of this pass was created: the pass must finish before another starts.',
            }),
          ),
          backupId: optional(
            backupId(
              'The backup this pass took before its irreversible step (the move to release 4 or the cutover).',
            ),
          ),
          settings: optional(recordedSettings('the target state')),
          fromImage: optional(
            string({
              description:
                'Image running when an image upgrade within release 4 was recorded: web and worker stay on it, and return to it if the migration fails.',
              maxLength: 512,
            }),
          ),
          schema: optional(
            object(
              {
                database: integer({
                  description: 'Analytics schema version the database was at.',
                  minimum: 0,
                }),
                latest: integer({ description: 'Newest version the new image knows.', minimum: 0 }),
                upgradableFrom: integer({
                  description: 'Oldest database version the new image migrates from.',
                  minimum: 0,
                }),
              },
              {
                description:
                  "The schema report of an image upgrade's preflight (server/contract/upgrade.ts).",
              },
            ),
          ),
          rollingBack: optional(
            string({
              description:
                'The migration of this image upgrade failed (why): the schema is being rewound to the version the previous image runs.',
              maxLength: 1024,
            }),
          ),
        },
        { description: 'The recorded intent of the pass in progress; EventsOnly here is never taken back.' },
      ),
    ),
    phase: optional(string({ description: 'Short summary for printer columns.', maxLength: 64 })),
    conditions: optional(
      array(condition, {
        description:
          'Ready, Reconciling, Stalled (kstatus) and PreflightPassed, SchemaMigrated, BackfillComplete, PropagationHealthy, ProducersCompatible, EvaluatorsCompatible, CutoverApproved, CutoverReady, BackupComplete, Restored, BackupScheduled, BackupVerified, Hibernated, Paused.',
        maxItems: 32,
        listType: 'map',
        mapKeys: ['type'],
      }),
    ),
    backfill: optional(
      object(
        {
          completedSteps: integer({
            description: 'Steps finished, in chain order (the cursor).',
            minimum: 0,
          }),
          totalSteps: integer({ description: 'Steps enabled (4, or 5 with dropScratchTables).', minimum: 0 }),
          currentStep: optional(
            integer({ description: 'Step running or next to run.', minimum: 1, maximum: 5 }),
          ),
          currentJob: optional(string({ description: 'Job of the current step.', maxLength: 253 })),
          progress: string({ description: 'completedSteps/totalSteps, for printer columns.', maxLength: 16 }),
          steps: optional(
            array(
              object(
                {
                  step: integer({ description: 'Step number in chain order.', minimum: 1, maximum: 5 }),
                  status: enumOf(BACKFILL_STEP_STATUSES, { description: 'State the worker records.' }),
                  chunksDone: integer({ description: 'Chunks of the step finished.', minimum: 0 }),
                  chunksTotal: integer({
                    description: 'Chunks of the step (0 before it is planned).',
                    minimum: 0,
                  }),
                },
                { description: "One step's progress." },
              ),
              {
                description:
                  "Each enabled step's progress from the worker's last backfill report (kept while the worker does not answer).",
                maxItems: 5,
              },
            ),
          ),
        },
        { description: 'Progress of the historic backfill chain.' },
      ),
    ),
    plannedActions: optional(
      array(string({ description: 'An action.', maxLength: 512 }), {
        description: 'What the operator does next.',
        maxItems: 16,
      }),
    ),
    blockedBy: optional(
      array(string({ description: 'A blocking reason.', maxLength: 1024 }), {
        description: 'What the operator is waiting for.',
        maxItems: 16,
      }),
    ),
    deployedImage: optional(
      string({ description: 'Image of the last completed pass (runs the rollback Job).', maxLength: 512 }),
    ),
    previousImage: optional(
      string({ description: 'Image deployed before the last image upgrade completed.', maxLength: 512 }),
    ),
    failedUpgrade: optional(
      object(
        {
          image: string({
            description: 'The image whose migration failed; not retried while spec.image names it.',
            maxLength: 512,
          }),
          reason: string({ description: "The migration Job's reason.", maxLength: 1024 }),
          schemaVersion: integer({ description: 'The schema version rewound to.', minimum: 0 }),
          at: timestamp('When the rollback completed.'),
        },
        { description: 'The last image upgrade rolled back after its migration failed.' },
      ),
    ),
    settings: optional(recordedSettings('the observed state (absent in Release3)')),
    dualSince: optional(timestamp('When the state became Dual (for cutover.retentionWindow).')),
    approval: optional(
      object(
        {
          specGeneration: integer({
            description:
              'Generation at which the spec (apart from approvals) last changed: approvals name it or a later one.',
            minimum: 0,
            format: 'int64',
          }),
          specHash: string({ description: 'Hash of the spec apart from approvals.', maxLength: 64 }),
        },
        { description: 'What an approval must name.' },
      ),
    ),
    attempts: optional(
      map(integer({ description: 'Attempt number.', minimum: 0 }), {
        description: 'Attempt number of each Job purpose (raised by a retry request).',
        maxProperties: 16,
      }),
    ),
    consumedRetries: optional(
      map(string({ description: 'Annotation value.', maxLength: 64 }), {
        description: 'Retry annotation values already acted on, by annotation.',
        maxProperties: 4,
      }),
    ),
    jobs: optional(
      array(jobResult, {
        description:
          "The result of the latest finished Job of each purpose, kept after the Job's ttlSecondsAfterFinished removed it, so a step that succeeded never runs again and a failed one stays failed until a retry.",
        maxItems: 16,
        listType: 'map',
        mapKeys: ['purpose'],
      }),
    ),
    legacyTablesTruncated: optional(boolean({ description: 'The cleanup Job finished.' })),
    backups: optional(
      array(backupRecord, {
        description: `The latest ${MAX_BACKUPS_RECORDED} backups, newest first; each also has a ConfigMap <name>-backup-<id> owned by this object.`,
        maxItems: MAX_BACKUPS_RECORDED,
        listType: 'map',
        mapKeys: ['id'],
      }),
    ),
    restore: optional(restoreRecord),
    hibernation: optional(hibernationRecord),
    backupSchedule: optional(backupSchedule),
    backupVerification: optional(backupVerification),
    autoscaling: optional(autoscalingStatus),
    probeStreak: optional(
      object(
        {
          stuck: integer({
            description: 'Consecutive probe rounds in which a worker answered stuck.',
            minimum: 0,
          }),
          unanswered: integer({
            description: 'Consecutive probe rounds without a definite answer from every worker pod.',
            minimum: 0,
          }),
        },
        {
          description:
            'Propagation probe counts behind PropagationHealthy (compared with spec.propagation.failureThreshold); kept across operator restarts.',
        },
      ),
    ),
  },
  { description: 'Observed state, written by the operator.' },
);

export type ObservabilityServiceSpec = TypeOf<typeof specSchema>;
export type ObservabilityServiceStatus = TypeOf<typeof statusSchema>;
export type Condition = TypeOf<typeof condition>;
export type RecordedSettings = TypeOf<ReturnType<typeof recordedSettings>>;
export type SecretKeyRef = ObjectOf<{ name: ReturnType<typeof string>; key: ReturnType<typeof string> }>;
export type BlobStorage = TypeOf<typeof blobStorage>;
export type JobResult = TypeOf<typeof jobResult>;
export type BackupRecord = TypeOf<typeof backupRecord>;
export type RestoreRecord = TypeOf<typeof restoreRecord>;
export type HibernationRecord = TypeOf<typeof hibernationRecord>;
export type BackupScheduleStatus = TypeOf<typeof backupSchedule>;
export type BackupVerificationStatus = TypeOf<typeof backupVerification>;
export type BackupSpec = TypeOf<typeof backup>;
export type AutoscalingSpec = TypeOf<typeof autoscaling>;
export type AutoscalingStatus = TypeOf<typeof autoscalingStatus>;

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  generation: number;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  resourceVersion?: string;
}

export interface ObservabilityService {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: ObjectMeta;
  spec: ObservabilityServiceSpec;
  status?: ObservabilityServiceStatus;
}

export const CONDITION_TYPES = [
  'Ready',
  'Reconciling',
  'Stalled',
  'PreflightPassed',
  'SchemaMigrated',
  'BackfillComplete',
  'PropagationHealthy',
  'ProducersCompatible',
  'EvaluatorsCompatible',
  'CutoverApproved',
  'CutoverReady',
  'BackupComplete',
  'Restored',
  'BackupScheduled',
  'BackupVerified',
  'Hibernated',
  'Paused',
] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];
