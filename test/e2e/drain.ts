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
        refusals.push(typeof err.body === 'string' ? err.body : JSON.stringify(err.body));
        if (Date.now() > deadline)
          throw new Error(`eviction of ${name} still refused after ${timeoutMs} ms: ${refusals.at(-1)}`);
        await sleep(retryMs);
      }
    }
    out.push({ pod: name, refusals });
  }
  return out;
}
