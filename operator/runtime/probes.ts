/**
 * HTTP reads of the worker pods that gate the cutover: the propagation probe, the producer report
 * and the backfill progress. Anything but a definite answer counts as "unreachable" (G4): a gate
 * never opens on silence.
 */
export type ProbeResult = 'healthy' | 'stuck' | 'unreachable';

const TIMEOUT_MS = 3_000;

async function get(url: string): Promise<Response | undefined> {
  try {
    return await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch {
    return undefined;
  }
}

/** `GET /api/health?failIfEventPropagationStuck=true` (the planner's path) on one worker pod. */
export async function probePropagation(
  podIP: string,
  path = '/api/health?failIfEventPropagationStuck=true',
  port = 3030,
): Promise<ProbeResult> {
  const res = await get(`http://${podIP}:${port}${path.startsWith('/') ? path : `/${path}`}`);
  if (!res) return 'unreachable';
  const body = (await res.json().catch(() => undefined)) as { status?: string } | undefined;
  if (res.status === 200) return 'healthy';
  return body?.status === 'Event propagation stuck' ? 'stuck' : 'unreachable';
}

export interface ProducersSeen {
  producers: { publicKey: string; sdkName: string; sdkVersion: string; path: string; lastSeen: string }[];
}

/** The producers on paths events_only refuses within the window, or undefined when unknown. */
export async function fetchProducers(
  podIP: string,
  since: string,
  port = 3030,
): Promise<ProducersSeen | undefined> {
  const res = await get(`http://${podIP}:${port}/api/producers?since=${encodeURIComponent(since)}`);
  if (res?.status !== 200) return undefined;
  return (await res.json().catch(() => undefined)) as ProducersSeen | undefined;
}

export interface BackfillProgress {
  steps: {
    step: number;
    status: string;
    chunksDone: number;
    chunksTotal: number;
    failedReason: string | null;
  }[];
}

export async function fetchBackfill(podIP: string, port = 3030): Promise<BackfillProgress | undefined> {
  const res = await get(`http://${podIP}:${port}/api/backfill`);
  if (res?.status !== 200) return undefined;
  return (await res.json().catch(() => undefined)) as BackfillProgress | undefined;
}
