/**
 * A self-healing informer: client-node's list-and-watch cache, restarted with backoff whenever the
 * watch ends in an error (an expired resourceVersion, 410 Gone, included: a restart lists afresh),
 * so a dropped connection never leaves the controller blind. Every add, update and delete calls
 * `onChange` with the object, for the controller to enqueue, unless the `filter` says the event
 * changed nothing the operator reads. Every listed and watched object passes through `trim`
 * (cache-trim.ts; by default it loses its managedFields) before the cache stores it.
 */
import {
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  ListWatch,
  Watch,
} from '@kubernetes/client-node';
import { type Trim, withoutManagedFields } from './cache-trim.ts';
import type { ChangeFilter } from './enqueue.ts';

export interface SupervisedInformer<T extends KubernetesObject> {
  list(namespace?: string): readonly T[];
  get(name: string, namespace?: string): T | undefined;
  /** Resolves after the first successful list. */
  synced: Promise<void>;
  stop(): Promise<void>;
}

export function superviseInformer<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  listFn: () => Promise<KubernetesListObject<T>>,
  onChange: (obj: T) => void,
  options: {
    labelSelector?: string;
    filter?: ChangeFilter<T>;
    trim?: Trim<T>;
    log?: (msg: string, fields?: Record<string, unknown>) => void;
  } = {},
): SupervisedInformer<T> {
  const trim = options.trim ?? withoutManagedFields;
  const watch = new Watch(kc);
  // client-node's ListWatch has no transform of its own: its list function and its watch are
  // wrapped so that it only ever sees trimmed objects (ERROR and BOOKMARK events pass unchanged).
  const trimmingWatch = {
    watch: (...[watchPath, query, callback, done]: Parameters<Watch['watch']>) =>
      watch.watch(
        watchPath,
        query,
        (phase, obj, raw) =>
          callback(
            phase,
            phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED' ? trim(obj) : obj,
            raw,
          ),
        done,
      ),
  } as Watch;
  const trimmedList = async (): Promise<KubernetesListObject<T>> => {
    const list = await listFn();
    return { ...list, items: list.items.map(trim) };
  };
  const informer = new ListWatch<T>(path, trimmingWatch, trimmedList, false, options.labelSelector);
  let stopped = false;
  let failures = 0;
  let markSynced: () => void = () => {};
  const synced = new Promise<void>((resolve) => {
    markSynced = resolve;
  });
  for (const verb of ['add', 'update', 'delete'] as const) {
    informer.on(verb, (obj) => {
      failures = 0;
      if (!options.filter || options.filter.admit(verb, obj)) onChange(obj);
    });
  }
  const start = async () => {
    while (!stopped) {
      try {
        await informer.start();
        failures = 0;
        markSynced();
        return;
      } catch (err) {
        failures++;
        options.log?.('informer list failed', { path, error: (err as Error).message });
        await new Promise((r) => setTimeout(r, Math.min(30_000, 500 * 2 ** failures)));
      }
    }
  };
  informer.on('error', (err) => {
    if (stopped) return;
    failures++;
    options.log?.('informer watch ended; restarting', { path, error: (err as Error | undefined)?.message });
    setTimeout(() => void start(), Math.min(30_000, 500 * 2 ** failures));
  });
  void start();
  return {
    list: (namespace) => informer.list(namespace),
    get: (name, namespace) => informer.get(name, namespace),
    synced,
    async stop() {
      stopped = true;
      await informer.stop();
    },
  };
}
