/**
 * Evicts Pods one after another through the Eviction API, as `kubectl drain` does (without
 * cordoning: the node is shared): an eviction the PodDisruptionBudget does not allow answers 429
 * and is retried until the budget allows it, within a bound.
 */
import { ApiException, type CoreV1Api } from '@kubernetes/client-node';
import { sleep } from '../../cluster/wait.ts';

export interface Eviction {
  pod: string;
  /** The 429 answers before the eviction was accepted, with their messages. */
  refusals: string[];
}

/** The message of the API server's Status answer (a JSON string in the client's exception). */
function statusMessage(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    return text;
  }
}

export async function drain(
  core: CoreV1Api,
  namespace: string,
  pods: string[],
  { timeoutMs = 300_000, retryMs = 2_000 } = {},
): Promise<Eviction[]> {
  const deadline = Date.now() + timeoutMs;
  const out: Eviction[] = [];
  for (const name of pods) {
    const refusals: string[] = [];
    for (;;) {
      try {
        await core.createNamespacedPodEviction({
          name,
          namespace,
          body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
        });
        break;
      } catch (err) {
        if (!(err instanceof ApiException) || err.code !== 429) throw err;
        refusals.push(statusMessage(err.body));
        if (Date.now() > deadline)
          throw new Error(`eviction of ${name} still refused after ${timeoutMs} ms: ${refusals.at(-1)}`);
        await sleep(retryMs);
      }
    }
    out.push({ pod: name, refusals });
  }
  return out;
}
