/**
 * The worker's HTTP surface on port 3030: `/api/health` (with the opt-in
 * `failIfEventPropagationStuck=true`), `/api/ready` (fails after SIGTERM so traffic drains),
 * the operator's reports (producers, backfill, ingestion backlog, Job results) and Prometheus `/metrics`. Both health routes check PostgreSQL and Redis with a short timeout.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { Registry } from 'prom-client';
import { parseDuration } from '../../contract/duration.ts';
import {
  type BackfillReport,
  HEALTH_STATUS,
  type HealthResponse,
  type IngestionBacklog,
  type JobResultsReport,
  producersQuerySchema,
  STUCK_PROBE_QUERY,
  type StoreReport,
  WORKER_PATHS,
} from '../../contract/worker-api.ts';
import type { StepStatus } from '../../features/backfill/manager.ts';
import { propagationReport } from '../../features/events/propagation-record.ts';
import { latestJobResults } from '../../features/job-results/store.ts';
import { producersSince } from '../../features/producers/recorder.ts';
import type { Coordination } from '../../platform/coordination/store.ts';

export interface WorkerHttpContext {
  /** Backfill chain progress, for `GET /api/backfill`. */
  backfillStatus: () => Promise<StepStatus[]>;
  /** The analytics store as the backfill sees it; fails when the store does not answer. */
  backfillStore: (steps: StepStatus[]) => Promise<StoreReport>;
  /** The ingestion log's queue now, for `GET /api/ingestion/backlog`. */
  ingestionBacklog: () => Promise<IngestionBacklog>;
  pool: pg.Pool;
  coordination: Coordination;
  /** The stuck probe judges the propagation (dual write runs here). */
  propagationEnabled: boolean;
  thresholdMinutes: number;
  processStartedAt: number;
  shuttingDown: () => boolean;
  metrics: Registry;
}

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)),
      CHECK_TIMEOUT_MS,
    );
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

async function dependencyChecks(ctx: WorkerHttpContext) {
  const check = async (name: string, fn: () => Promise<unknown>) => {
    try {
      await withTimeout(fn(), name);
      return { name, ok: true };
    } catch (err) {
      return { name, ok: false, error: (err as Error).message };
    }
  };
  return Promise.all([
    check('postgres', () => ctx.pool.query('SELECT 1')),
    check('redis', () => ctx.coordination.ping()),
  ]);
}

export function buildWorkerApp(ctx: WorkerHttpContext): FastifyInstance {
  const app = Fastify({ logger: false });

  app.get<{ Querystring: Record<string, string | undefined> }>(WORKER_PATHS.health, async (req, reply) => {
    const checks = await dependencyChecks(ctx);
    let eventPropagation: HealthResponse['eventPropagation'];
    if (req.query[STUCK_PROBE_QUERY] === 'true') {
      eventPropagation = await propagationReport(ctx.coordination, {
        enabled: ctx.propagationEnabled,
        processStartedAt: ctx.processStartedAt,
        thresholdMinutes: ctx.thresholdMinutes,
      });
    }
    const failing = checks.filter((c) => !c.ok);
    const answer = (code: number, body: HealthResponse) => reply.code(code).send(body);
    if (failing.length > 0) return answer(503, { status: HEALTH_STATUS.error, checks, eventPropagation });
    if (eventPropagation?.stuck)
      return answer(503, { status: HEALTH_STATUS.propagationStuck, checks, eventPropagation });
    return answer(200, { status: HEALTH_STATUS.ok, checks, eventPropagation });
  });

  app.get(WORKER_PATHS.ready, async (_req, reply) => {
    if (ctx.shuttingDown()) return reply.code(503).send({ status: HEALTH_STATUS.shuttingDown });
    const checks = await dependencyChecks(ctx);
    if (checks.some((c) => !c.ok)) return reply.code(503).send({ status: HEALTH_STATUS.error, checks });
    return { status: HEALTH_STATUS.ok, checks };
  });

  // Read-only reports for the operator, which gates the cutover on them without database access.
  app.get(WORKER_PATHS.producers, async (req, reply) => {
    const query = producersQuerySchema.safeParse(req.query);
    if (!query.success)
      return reply.code(400).send({ message: query.error.issues.map((i) => i.message).join('; ') });
    return producersSince(ctx.pool, new Date(Date.now() - parseDuration(query.data.since)!));
  });
  app.get(WORKER_PATHS.backfill, async (): Promise<BackfillReport> => {
    const steps = await ctx.backfillStatus();
    // The progress stands without the store's figures: they feed estimates and the pressure condition.
    const store = await ctx.backfillStore(steps).catch(() => undefined);
    return { steps, ...(store ? { store } : {}) };
  });

  app.get(WORKER_PATHS.ingestionBacklog, async (): Promise<IngestionBacklog> => ctx.ingestionBacklog());

  app.get(
    WORKER_PATHS.jobResults,
    async (): Promise<JobResultsReport> => ({ results: await latestJobResults(ctx.pool) }),
  );

  app.get(WORKER_PATHS.metrics, async (_req, reply) => {
    return reply.header('content-type', ctx.metrics.contentType).send(await ctx.metrics.metrics());
  });
  return app;
}
