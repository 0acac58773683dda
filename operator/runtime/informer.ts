/**
 * A self-healing informer: client-node's list-and-watch cache, restarted with backoff whenever the
 * watch ends in an error (an expired resourceVersion, 410 Gone, included: a restart lists afresh),
 * so a dropped connection never leaves the controller blind. Every add, update and delete calls
 * `onChange` with the object, for the controller to enqueue, unless the `filter` says the event
 * changed nothing the operator reads. Every listed and watched object passes through `trim`
 * (cache-trim.ts; by default it loses its managedFields) before the cache stores it.
 *
 * `hasSynced()` says whether the cache is complete now, as client-go's HasSynced does, but also
 * falls back to false while the informer restarts after an error or relists after 410 Gone: a
 * cache that is between watches may miss any change, so nothing may conclude from it that a child
 * is missing. It turns true when the watch is (re)opened: the list has been applied by then.
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
  /** The cache is complete now: listed, and its watch not broken since. */
  hasSynced(): boolean;
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
  let stopped = false;
  let failures = 0;
  let current = false;
  let markSynced: () => void = () => {};
  const synced = new Promise<void>((resolve) => {
    markSynced = resolve;
  });
  // client-node's ListWatch has no transform of its own: its list function and its watch are
  // wrapped so that it only ever sees trimmed objects (ERROR and BOOKMARK events pass unchanged).
  // ListWatch opens the watch only after it applied a fresh list, or when it resumes from the
  // last resourceVersion (the watch then replays what happened since): either way complete.
  const trimmingWatch = {
    watch: (...[watchPath, query, callback, done]: Parameters<Watch['watch']>) => {
      current = true;
      markSynced();
      return watch.watch(
        watchPath,
        query,
        (phase, obj, raw) =>
          callback(
            phase,
            phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED' ? trim(obj) : obj,
            raw,
          ),
        done,
      );
    },
  } as Watch;
  const trimmedList = async (): Promise<KubernetesListObject<T>> => {
    const list = await listFn();
    return { ...list, items: list.items.map(trim) };
  };
  const informer = new ListWatch<T>(path, trimmingWatch, trimmedList, false, options.labelSelector);
  // A reconnect without a resourceVersion (after 410 Gone) lists afresh: not complete until then.
  informer.on('connect', () => {
    if (informer.latestResourceVersion() === '') current = false;
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
        return;
      } catch (err) {
        failures++;
        options.log?.('informer list failed', { path, error: (err as Error).message });
        await new Promise((r) => setTimeout(r, Math.min(30_000, 500 * 2 ** failures)));
      }
    }
  };
  informer.on('error', (err) => {
    current = false;
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
    hasSynced: () => current && !stopped,
    async stop() {
      stopped = true;
      await informer.stop();
    },
  };
}
