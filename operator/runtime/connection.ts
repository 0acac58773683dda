/**
 * A KubeConfig whose API calls and watches share one connection pool per cluster and user.
 * client-node 2.x builds a new undici Agent for every request, so each call paid a fresh TLS
 * handshake and left its connection open until the keep-alive timeout: that was most of the
 * operator's reaction time and of its memory growth with the number of objects (each periodic
 * reconcile opened connections). Agents are keyed as client-node keys its own WebSocket agents.
 */
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

export class PooledKubeConfig extends KubeConfig {
  readonly #pools = new Map<string, Dispatcher>();

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    // The Agent just built has opened nothing yet: the first one of a key becomes the pool.
    const fresh = context.getDispatcher();
    if (!fresh) return;
    const key = JSON.stringify([this.getCurrentCluster()?.name ?? '', this.getCurrentUser()?.name ?? '']);
    const pool = this.#pools.get(key);
    if (pool) context.setDispatcher(pool);
    else this.#pools.set(key, fresh);
  }

  /** Drops the pooled connections (at shutdown, once the watches and writes are over). */
  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((p) => p.destroy()));
    this.#pools.clear();
  }
}
