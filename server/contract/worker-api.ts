/**
 * The worker's HTTP contract on its port (3030): paths, query parameters, response bodies and the
 * probe's messages. The worker answers with these shapes; the operator parses them with these
 * schemas, so a change on one side is a compile or parse error on the other.
 */
import { z } from 'zod';
import { DURATION_EXAMPLES, parseDuration } from './duration.ts';

export const WORKER_PATHS = {
  health: '/api/health',
  ready: '/api/ready',
  producers: '/api/producers',
  backfill: '/api/backfill',
  ingestionBacklog: '/api/ingestion/backlog',
  jobResults: '/api/job-results',
  metrics: '/metrics',
} as const;

/** The web's probes (port 3000). */
export const WEB_PATHS = {
  health: '/api/public/health',
  ready: '/api/public/ready',
} as const;

/** `/api/health` with this query also fails (503) when the event propagation is stuck. */
export const STUCK_PROBE_QUERY = 'failIfEventPropagationStuck';
export const PROPAGATION_PROBE_PATH = `${WORKER_PATHS.health}?${STUCK_PROBE_QUERY}=true`;

/** The `status` of a health or readiness answer. */
export const HEALTH_STATUS = {
  ok: 'ok',
  /** A dependency (PostgreSQL, Redis) did not answer. */
  error: 'error',
  /** Dependencies answer but the propagation made no progress within the threshold. */
  propagationStuck: 'Event propagation stuck',
  /** `/api/ready` after SIGTERM, so traffic drains. */
  shuttingDown: 'SIGTERM / SIGINT received, shutting down',
} as const;

export const dependencyCheckSchema = z.object({
  name: z.string(),
  ok: z.boolean(),
  error: z.string().optional(),
});

export const propagationHealthSchema = z.object({
  /** The propagation job runs in this mode (dual write); when false the probe never fails on it. */
  enabled: z.boolean(),
  stuck: z.boolean(),
  /** The last successful run found no completed partition to propagate. */
  idle: z.boolean(),
  lastRunStartedAt: z.string().nullable(),
  lastSuccessAt: z.string().nullable(),
  secondsSinceLastRun: z.number().nullable(),
  secondsSinceLastSuccess: z.number().nullable(),
  lastProcessedPartition: z.string().nullable(),
  /** How far behind the newest propagated data is (informational: a quiet system is not late). */
  propagationDelaySeconds: z.number().nullable(),
  thresholdSeconds: z.number(),
  lastError: z.string().nullable(),
});
export type PropagationHealth = z.infer<typeof propagationHealthSchema>;

/** `GET /api/health[?failIfEventPropagationStuck=true]`: 200 with status ok, otherwise 503. */
export const healthResponseSchema = z.object({
  status: z.enum([HEALTH_STATUS.ok, HEALTH_STATUS.error, HEALTH_STATUS.propagationStuck]),
  checks: z.array(dependencyCheckSchema),
  eventPropagation: propagationHealthSchema.optional(),
});
export type HealthResponse = z.infer<typeof healthResponseSchema>;

/** Paths on which `events_only` refuses or changes what a producer sends. */
export const PRODUCER_PATHS = ['ingestion-api', 'legacy-endpoint', 'otel-dual-path'] as const;
export type ProducerPath = (typeof PRODUCER_PATHS)[number];

/**
 * What `events_only` does to a producer's traffic: `refused` (batch ingestion of anything but
 * scores answers 400, the legacy endpoints 404), or `loses-propagation` (OTLP without client-side
 * propagation is accepted and written directly, but trace-level attributes are no longer copied
 * onto its spans server-side). Only the first blocks the cutover.
 */
export const CONSEQUENCES = ['refused', 'loses-propagation'] as const;
export type Consequence = (typeof CONSEQUENCES)[number];

/** The one classification of a producer path (the spec's endpoint table and OTLP ingestion). */
export function consequenceOf(path: ProducerPath): Consequence {
  return path === 'otel-dual-path' ? 'loses-propagation' : 'refused';
}

/** `GET /api/producers?since=DURATION` (default 24h). */
export const DEFAULT_PRODUCERS_SINCE = '24h';
export const producersQuerySchema = z.object({
  since: z
    .string()
    .default(DEFAULT_PRODUCERS_SINCE)
    .refine((s) => parseDuration(s) !== undefined, {
      message: `since must be a duration such as ${DEFAULT_PRODUCERS_SINCE} (${DURATION_EXAMPLES})`,
    }),
});

export const producerSeenSchema = z.object({
  projectId: z.string(),
  publicKey: z.string(),
  sdkName: z.string(),
  sdkVersion: z.string(),
  path: z.enum(PRODUCER_PATHS),
  consequence: z.enum(CONSEQUENCES),
  firstSeen: z.string(),
  lastSeen: z.string(),
  requests: z.number(),
});
export type ProducerSeen = z.infer<typeof producerSeenSchema>;

/** An enabled trace-level (Legacy) evaluation rule: it stops at the cutover to events_only. */
export const legacyEvaluatorSchema = z.object({
  projectId: z.string(),
  ruleId: z.string(),
  name: z.string(),
});

/** The producers report of `/api/producers` and `observatory producers --json`. */
export const producersReportSchema = z.object({
  since: z.string(),
  producers: z.array(producerSeenSchema),
  // Absent from workers that predate it: none known.
  legacyEvaluators: z.array(legacyEvaluatorSchema).default([]),
});
export type ProducersReport = z.infer<typeof producersReportSchema>;

export const BACKFILL_STEP_STATUSES = ['pending', 'dormant', 'running', 'finished', 'failed'] as const;

export const backfillStepSchema = z.object({
  step: z.number(),
  name: z.string(),
  status: z.enum(BACKFILL_STEP_STATUSES),
  chunksDone: z.number(),
  chunksTotal: z.number(),
  finishedAt: z.string().nullable(),
  failedAt: z.string().nullable(),
  failedReason: z.string().nullable(),
  lockedBy: z.string().nullable(),
});
export type BackfillStep = z.infer<typeof backfillStepSchema>;

/**
 * Free disk the analytics store must have before a backfill step (or its next chunk) starts, as a
 * multiple of the bytes the step still has to read: the spec's "about 3x" headroom (the scratch
 * copy, the events it becomes, and the merges of both).
 */
export const DISK_HEADROOM_FACTOR = 3;

/** Bytes a step still needs: the headroom over the share of its source not yet moved. */
export function diskNeededBytes(sourceBytes: number, chunksDone: number, chunksTotal: number): number {
  const remaining = chunksTotal > 0 ? Math.max(0, chunksTotal - chunksDone) / chunksTotal : 1;
  return Math.ceil(DISK_HEADROOM_FACTOR * sourceBytes * remaining);
}

/** What the estimates of a step build on: its source's size and when its chunks ran. */
export const stepSourceSchema = z.object({
  step: z.number(),
  /** Rows and bytes on disk of the step's source table (system.parts). */
  rows: z.number(),
  bytes: z.number(),
  /** When its chunks were planned (the first Job of the step started). */
  startedAt: z.string().nullable(),
  /** When its last chunk was recorded. */
  checkpointAt: z.string().nullable(),
});
export type StepSource = z.infer<typeof stepSourceSchema>;

/** The analytics store as the backfill sees it, and why the next chunk waits (null: it does not). */
export const storeReportSchema = z.object({
  /** Free bytes of the store's disks (system.disks). */
  freeBytes: z.number(),
  sources: z.array(stepSourceSchema),
  pressure: z.object({ step: z.number(), reason: z.string() }).nullable(),
});
export type StoreReport = z.infer<typeof storeReportSchema>;

/** `GET /api/backfill`: the chain's progress, and the store (absent from older workers, or unreadable). */
export const backfillReportSchema = z.object({
  steps: z.array(backfillStepSchema),
  store: storeReportSchema.optional(),
});
export type BackfillReport = z.infer<typeof backfillReportSchema>;

/**
 * `GET /api/ingestion/backlog`: the ingestion log's queue as it is now (one indexed query), which
 * the operator scales the workers on. The queue is shared, so any worker answers for all.
 */
export const ingestionBacklogSchema = z.object({
  pendingFiles: z.number(),
  pendingBytes: z.number(),
  /** Seconds since the oldest undrained write was accepted (0: none pending). */
  oldestPendingAgeSeconds: z.number(),
});
export type IngestionBacklog = z.infer<typeof ingestionBacklogSchema>;

/**
 * `GET /api/job-results`: what the one-shot commands of the operator's Jobs (preflight, migrate,
 * cleanup) recorded in PostgreSQL as they ended, by Job name, newest first and at most
 * JOB_RESULTS_LIMIT: a result outlives a Pod killed after its work, or a Job removed before the
 * operator saw it complete. Only the current pass's Jobs (three at most) and the cleanup's matter.
 */
export const JOB_RESULTS_LIMIT = 50;

export const JOB_RESULTS = ['succeeded', 'failed'] as const;

export const jobResultSchema = z.object({
  job: z.string(),
  /** The command that recorded it, e.g. `migrate up`. */
  command: z.string(),
  result: z.enum(JOB_RESULTS),
  /** What the command said of its result (the failed checks, the schema version reached). */
  detail: z.string(),
  recordedAt: z.string(),
});
export type JobResultRecord = z.infer<typeof jobResultSchema>;

export const jobResultsReportSchema = z.object({ results: z.array(jobResultSchema) });
export type JobResultsReport = z.infer<typeof jobResultsReportSchema>;
