/**
 * HTTP reads of the worker pods that gate the cutover: the propagation probe, the producer report
 * and the backfill progress, the Jobs' recorded results, and the ingestion backlog the autoscaler reads, parsed with the worker's published schemas. Anything but a definite
 * answer counts as "unreachable" (G4): a gate never opens on silence.
 */
import type { z } from 'zod';
import { PORTS } from '../../server/contract/ports.ts';
import {
  type BackfillReport,
  backfillReportSchema,
  HEALTH_STATUS,
  healthResponseSchema,
  type IngestionBacklog,
  ingestionBacklogSchema,
  type JobResultsReport,
  jobResultsReportSchema,
  PROPAGATION_PROBE_PATH,
  type ProducersReport,
  producersReportSchema,
  WORKER_PATHS,
} from '../../server/contract/worker-api.ts';
import type { ProbeResult } from '../planner/types.ts';
import type { WorkerReads } from './observe.ts';

const TIMEOUT_MS = 3_000;

async function get(url: string): Promise<Response | undefined> {
  try {
    return await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch {
    return undefined;
  }
}

async function parsed<T>(res: Response, schema: z.ZodType<T>): Promise<T | undefined> {
  const body: unknown = await res.json().catch(() => undefined);
  const r = schema.safeParse(body);
  return r.success ? r.data : undefined;
}

/** `GET /api/health?failIfEventPropagationStuck=true` (the planner's path) on one worker pod. */
export async function probePropagation(
  podIP: string,
  path: string = PROPAGATION_PROBE_PATH,
  port: number = PORTS.worker,
): Promise<ProbeResult> {
  const res = await get(`http://${podIP}:${port}${path.startsWith('/') ? path : `/${path}`}`);
  if (!res) return 'unreachable';
  const body = await parsed(res, healthResponseSchema);
  if (res.status === 200 && body?.status === HEALTH_STATUS.ok) return 'healthy';
  return body?.status === HEALTH_STATUS.propagationStuck ? 'stuck' : 'unreachable';
}

/** The producers report within the window, or undefined when unknown. */
export async function fetchProducers(
  podIP: string,
  since: string,
  port: number = PORTS.worker,
): Promise<ProducersReport | undefined> {
  const res = await get(
    `http://${podIP}:${port}${WORKER_PATHS.producers}?since=${encodeURIComponent(since)}`,
  );
  return res?.status === 200 ? parsed(res, producersReportSchema) : undefined;
}

export async function fetchBackfill(
  podIP: string,
  port: number = PORTS.worker,
): Promise<BackfillReport | undefined> {
  const res = await get(`http://${podIP}:${port}${WORKER_PATHS.backfill}`);
  return res?.status === 200 ? parsed(res, backfillReportSchema) : undefined;
}

/** The ingestion log's queue as one worker reads it, or undefined when unknown. */
export async function fetchIngestionBacklog(
  podIP: string,
  port: number = PORTS.worker,
): Promise<IngestionBacklog | undefined> {
  const res = await get(`http://${podIP}:${port}${WORKER_PATHS.ingestionBacklog}`);
  return res?.status === 200 ? parsed(res, ingestionBacklogSchema) : undefined;
}

/** The results the Jobs' commands recorded, or undefined when unknown. */
export async function fetchJobResults(
  podIP: string,
  port: number = PORTS.worker,
): Promise<JobResultsReport | undefined> {
  const res = await get(`http://${podIP}:${port}${WORKER_PATHS.jobResults}`);
  return res?.status === 200 ? parsed(res, jobResultsReportSchema) : undefined;
}

/** The operator's reads: straight to each worker Pod's IP (every worker's own answer, G4). */
export const podAddressReads: WorkerReads = {
  probe: (pod, path) => probePropagation(pod.status?.podIP ?? '', path),
  producers: (pod, since) => fetchProducers(pod.status?.podIP ?? '', since),
  backfill: (pod) => fetchBackfill(pod.status?.podIP ?? ''),
  ingestionBacklog: (pod) => fetchIngestionBacklog(pod.status?.podIP ?? ''),
  jobResults: (pod) => fetchJobResults(pod.status?.podIP ?? ''),
};
