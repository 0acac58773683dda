/**
 * The worker's background jobs: the dual-write propagation (while the write mode writes the
 * events tables: dual, and events_only to drain what is left), the historic backfill chain, the
 * ingestion log's drain and sweep, the scheduled exports and the projects' integrations (blob storage,
 * PostHog), the observation-level evaluations, the alert rules, queued trace deletions, data
 * retention and the removal of deleted projects.
 * `observatory worker` runs them beside its health endpoints; `observatory dev` runs them in its
 * one process, so staged data from older SDKs arrives there as it does in a deployment.
 */
import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { Logger } from 'pino';
import { behaviourOf } from '../../contract/write-modes.ts';
import { AlertJob } from '../../features/alerts/job.ts';
import { BackfillManager } from '../../features/backfill/manager.ts';
import { startTraceDeletions } from '../../features/deletion/deletion-worker.ts';
import { runProjectDeletionPass } from '../../features/deletion/projects.ts';
import { pruneTraceDeletions } from '../../features/deletion/queue.ts';
import { runRetentionPass } from '../../features/deletion/retention.ts';
import { traceDeletionDeps } from '../../features/deletion/traces.ts';
import { EvaluationJob } from '../../features/evaluation/job.ts';
import { scanSources } from '../../features/evaluation/scan.ts';
import { rewindObservationScans } from '../../features/evaluation/store.ts';
import { propagationWatched } from '../../features/events/propagation-record.ts';
import { runExportPass } from '../../features/exports/job.ts';
import { type DrainReport, startDrain } from '../../features/ingestion/log/drain.ts';
import { type Backlog, backlog } from '../../features/ingestion/log/queue.ts';
import { pruneLog, sweep } from '../../features/ingestion/log/sweep.ts';
import { runBlobIntegrationPass } from '../../features/integrations/blob-job.ts';
import { runPostHogPass } from '../../features/integrations/posthog-job.ts';
import { ModelCatalog } from '../../features/models/catalog.ts';
import { ingestionTombstones, TombstoneGuard } from '../../features/tombstones/record.ts';
import { pgEntityLocks } from '../../features/write-model/entity-locks.ts';
import { clickhouseStore } from '../../features/write-model/store.ts';
import type { ServiceConfig } from '../../kernel/config/env.ts';
import { PassTimer, waitAtMost } from '../../kernel/passes.ts';
import type { BlobStore } from '../../platform/blobs/store.ts';
import type { Coordination } from '../../platform/coordination/store.ts';
import { dialectOf } from '../../platform/migrations/schema.ts';
import { PropagationJob, type PropagationMetrics } from './propagation/job.ts';

export interface WorkerJobsOptions {
  config: ServiceConfig;
  pool: pg.Pool;
  analytics: ClickHouseClient;
  coordination: Coordination;
  log: Logger;
  workerId: string;
  /** False when the analytics schema is newer than this release knows: no job runs against it. */
  schemaKnown: boolean;
  onPropagationMetrics?: (m: PropagationMetrics) => void;
  /** Where the scheduled exports write; absent: the export job does not run. */
  exportBlobs?: BlobStore | undefined;
  /** The media bucket, from which retention removes what expired traces leave unlinked. */
  mediaBlobs?: BlobStore | undefined;
  /** The ingestion log's bucket; absent: there is no log to drain. */
  ingestionLogBlobs?: BlobStore | undefined;
  onIngestionDrain?: (r: DrainReport) => void;
  onIngestionBacklog?: (b: Backlog) => void;
}

export interface WorkerJobs {
  propagationEnabled: boolean;
  /**
   * The stuck probe judges the propagation: only where dual write runs. In events_only the job
   * just drains what is left, and the spec's probe "passes on deployments where dual write does
   * not run".
   */
  propagationWatched: boolean;
  backfill: BackfillManager;
  /** Lets a running chain step stop between chunks. */
  beginShutdown(): void;
  stop(): Promise<void>;
}

const CHAIN_PASS_EVERY_MS = 30_000;
/** Retention looks for due projects this often; each project's pass runs at most hourly. */
const RETENTION_TICK_MS = 5 * 60_000;
const CHAIN_STOP_WAIT_MS = 10_000;
/** Files per drain claim: many requests' rows per insert, one claim still a few seconds' work. */
const DRAIN_BATCH_FILES = 500;
/** The drain's pause once the log is caught up: the longest a logged write waits to be claimed. */
const DRAIN_IDLE_MS = 250;
const LOG_BACKLOG_EVERY_MS = 15_000;
const LOG_SWEEP_EVERY_MS = 60_000;
/** The pause of the trace deletion loop once nothing waits: the longest a queued deletion waits. */
const DELETION_IDLE_MS = 1_000;
/** How long a finished trace deletion stays readable (`GET /api/public/trace-deletions/{id}`). */
const FINISHED_DELETION_KEEP_MS = 7 * 24 * 3_600_000;

export function startWorkerJobs(o: WorkerJobsOptions): WorkerJobs {
  const propagationEnabled = behaviourOf(o.config.mode).runsPropagation && o.schemaKnown;
  const propagation = propagationEnabled
    ? new PropagationJob({
        analytics: o.analytics,
        coordination: o.coordination,
        log: o.log,
        workerId: o.workerId,
        // The Pod name, stable across the container's restarts: a restarted holder resumes at once.
        identity: o.config.podName,
        intervalMs: o.config.propagationIntervalSeconds * 1000,
        graceSeconds: o.config.propagationGraceSeconds,
        chunkRows: o.config.propagationChunkRows,
        onMetrics: o.onPropagationMetrics,
        // Propagated rows keep their staging `created_at`: observation rules look back for them.
        onPropagated: (oldest) => rewindObservationScans(o.pool, oldest),
        tombstones: new TombstoneGuard(o.pool, traceDeletionDeps(o.config, o)),
      })
    : undefined;
  propagation?.start();

  const evaluation = o.schemaKnown
    ? new EvaluationJob({
        pool: o.pool,
        analytics: o.analytics,
        store: clickhouseStore(o.analytics, o.config.clickhouse),
        llm: o.config.llm,
        log: o.log,
        workerId: o.workerId,
        sources: scanSources(behaviourOf(o.config.mode)),
      })
    : undefined;
  evaluation?.start();

  // Alert rules watch Metrics v2, which reads the events tables: only where they are written.
  const alerts =
    o.schemaKnown && behaviourOf(o.config.mode).writesEventsTables
      ? new AlertJob({
          pool: o.pool,
          analytics: o.analytics,
          llm: o.config.llm,
          log: o.log,
          tickMs: o.config.alerts.tickSeconds * 1000,
          retryBaseMs: o.config.alerts.retryBaseSeconds * 1000,
        })
      : undefined;
  alerts?.start();

  // The chain runs in-process as the reference's worker does; the operator turns this off and
  // runs each step as a Job instead. Each pass runs whatever step is next and runnable.
  let shuttingDown = false;
  const backfill = new BackfillManager({
    pool: o.pool,
    analytics: o.analytics,
    dialect: dialectOf(o.config),
    settings: o.config.mode,
    workerId: o.workerId,
    tuning: o.config.backfill,
    log: (msg, fields) => o.log.info(fields ?? {}, msg),
  });
  const chainInProcess = o.config.backgroundMigrationsInWorker && o.schemaKnown;
  const stopping = () => shuttingDown;
  const chainTimer = chainInProcess
    ? new PassTimer('backfill pass', CHAIN_PASS_EVERY_MS, () => backfill.runChain(stopping), o.log)
    : undefined;

  // Scheduled exports: one pass at a time; a pass cut short resumes from each export's checkpoint.
  const exportBlobs = o.schemaKnown ? o.exportBlobs : undefined;
  const exportEveryMs = o.config.exportIntervalSeconds * 1000;
  const exportTimer = exportBlobs
    ? new PassTimer('export pass', exportEveryMs, () => exportPass(o, exportBlobs, stopping), o.log)
    : undefined;

  // The projects' own destinations (blob storage, PostHog), on the same interval as the exports;
  // each integration resumes from its checkpoint.
  const integrationTimer = o.schemaKnown
    ? new PassTimer('integration pass', exportEveryMs, () => integrationPass(o, stopping), o.log)
    : undefined;

  // The ingestion log: drained by every worker (claims are leased), swept and pruned by each.
  const logBlobs = o.schemaKnown ? o.ingestionLogBlobs : undefined;
  const logPrefix = o.config.ingestionLog.s3?.prefix ?? '';
  const drain = logBlobs
    ? startDrain({
        pool: o.pool,
        blobs: logBlobs,
        deps: {
          store: clickhouseStore(o.analytics, o.config.clickhouse),
          locks: pgEntityLocks(o.pool),
          tombstones: ingestionTombstones(traceDeletionDeps(o.config, o)),
          models: new ModelCatalog(o.pool),
        },
        batchFiles: DRAIN_BATCH_FILES,
        // A claim not drained in this time is claimed again (its drainer died or hangs).
        leaseMs: o.config.ingestionLog.drainLeaseSeconds * 1000,
        holder: `drain-${o.workerId}-${randomUUID()}`,
        idleMs: DRAIN_IDLE_MS,
        onReport: (r) => {
          o.onIngestionDrain?.(r);
          if (r.failed > 0 || r.dead > 0) o.log.warn(r, 'ingestion log drain');
        },
        onError: (err) => o.log.error({ err: err.message }, 'ingestion log drain failed'),
      })
    : undefined;
  const backlogTimer = logBlobs
    ? new PassTimer(
        'ingestion log backlog',
        LOG_BACKLOG_EVERY_MS,
        async () => o.onIngestionBacklog?.(await backlog(o.pool)),
        o.log,
      )
    : undefined;
  const sweepTimer = logBlobs
    ? new PassTimer(
        'ingestion log sweep',
        LOG_SWEEP_EVERY_MS,
        async () => {
          const queued = await sweep(o.pool, logBlobs, logPrefix);
          if (queued > 0) o.log.warn({ queued }, 'ingestion log files without a queue row queued again');
          const pruned = await pruneLog(o.pool, logBlobs, o.config.ingestionLog.retentionHours * 3_600_000);
          if (pruned > 0) o.log.info({ pruned }, 'ingestion log files past retention deleted');
        },
        o.log,
      )
    : undefined;

  // Retention and the removal of deleted projects: in every mode, since their rows may sit in any
  // table an earlier mode wrote.
  const deletionDeps = traceDeletionDeps(o.config, {
    pool: o.pool,
    analytics: o.analytics,
    mediaBlobs: o.mediaBlobs,
  });
  // Queued trace deletions (the API's and the UI's): every worker takes batches (claims are leased).
  const traceDeletions = o.schemaKnown
    ? startTraceDeletions({
        deps: deletionDeps,
        holder: `delete-${o.workerId}-${randomUUID()}`,
        idleMs: DELETION_IDLE_MS,
        onBatch: (b) => o.log.info(b, 'trace deletion batch'),
        onError: (err) => o.log.error({ err: err.message }, 'trace deletion batch failed'),
      })
    : undefined;
  const retentionTimer = o.schemaKnown
    ? new PassTimer(
        'retention pass',
        RETENTION_TICK_MS,
        async () => {
          const r = await runRetentionPass(deletionDeps, new Date(), stopping);
          if (r.traces > 0 || r.scores > 0) o.log.info(r, 'retention pass');
          const removed = await runProjectDeletionPass(deletionDeps, stopping);
          if (removed.length > 0) o.log.info({ projects: removed }, 'deleted projects removed');
          const pruned = await pruneTraceDeletions(o.pool, FINISHED_DELETION_KEEP_MS);
          if (pruned > 0) o.log.info({ pruned }, 'finished trace deletions forgotten');
        },
        o.log,
      )
    : undefined;

  return {
    propagationEnabled,
    propagationWatched: o.schemaKnown && propagationWatched(o.config.mode),
    backfill,
    beginShutdown() {
      shuttingDown = true;
    },
    async stop() {
      shuttingDown = true;
      const passes = [
        chainTimer,
        exportTimer,
        integrationTimer,
        retentionTimer,
        backlogTimer,
        sweepTimer,
      ].map((t) => t?.stop());
      passes.push(drain?.stop(), traceDeletions?.stop());
      await propagation?.stop();
      await Promise.all([evaluation?.stop(CHAIN_STOP_WAIT_MS), alerts?.stop(CHAIN_STOP_WAIT_MS)]);
      // A running chunk or export window finishes or is abandoned; either resumes from its checkpoint.
      await waitAtMost(Promise.all(passes), CHAIN_STOP_WAIT_MS);
    },
  };
}

async function exportPass(o: WorkerJobsOptions, blobs: BlobStore, stopping: () => boolean): Promise<void> {
  if (stopping()) return;
  const r = await runExportPass({
    pool: o.pool,
    analytics: o.analytics,
    blobs,
    storagePrefix: o.config.exportStorage?.prefix ?? '',
    settings: o.config.mode,
  });
  if (r.windowsWritten > 0 || r.skipped.length > 0) o.log.info(r, 'export pass');
}

async function integrationPass(o: WorkerJobsOptions, stopping: () => boolean): Promise<void> {
  if (stopping()) return;
  const blob = await runBlobIntegrationPass({
    pool: o.pool,
    analytics: o.analytics,
    llm: o.config.llm,
    settings: o.config.mode,
  });
  if (blob.windows > 0 || blob.failed.length > 0) o.log.info(blob, 'blob storage integration pass');
  if (stopping() || !behaviourOf(o.config.mode).writesEventsTables) return;
  const posthog = await runPostHogPass({
    pool: o.pool,
    analytics: o.analytics,
    llm: o.config.llm,
    baseUrl: o.config.auth.publicUrl?.origin ?? '',
  });
  if (posthog.windows > 0 || posthog.failed.length > 0) o.log.info(posthog, 'PostHog integration pass');
}
