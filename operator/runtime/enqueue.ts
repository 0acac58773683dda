/**
 * Which watch events are worth a reconcile, in the spirit of controller-runtime's predicates. An
 * update enqueues only when what the operator reads of the object (its fingerprint) changed: a
 * Deployment's status heartbeat, a Pod's restart count or managedFields do not. The echo of the
 * operator's own status write enqueues nothing either (`expect`): the pass that wrote it already
 * acted on it, and a status written by anyone else still does. Adds and deletes always enqueue.
 * Each change used to cost three to five reconciles, which queued ahead of the next change.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { SPEC_HASH_ANNOTATION } from '../index.ts';
import { shortHash } from '../util/hash.ts';
import type { Source, Watched } from './kinds.ts';
import { COMPONENT, INSTANCE, isReady, observedDeployment, observedJob } from './observe.ts';

export type Verb = 'add' | 'update' | 'delete';

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export class ChangeFilter<T extends KubernetesObject> {
  // Hashes only: the filter never holds a Secret's values, and stays small.
  readonly #seen = new Map<string, string>();
  readonly #fingerprint: (obj: T) => unknown;

  constructor(fingerprint: (obj: T) => unknown) {
    this.#fingerprint = fingerprint;
  }

  /** Whether this event should enqueue its owner; remembers what it saw. */
  admit(verb: Verb, obj: T): boolean {
    const key = keyOf(obj);
    if (verb === 'delete') {
      this.#seen.delete(key);
      return true;
    }
    const print = shortHash(this.#fingerprint(obj), 64);
    const before = this.#seen.get(key);
    this.#seen.set(key, print);
    return verb === 'add' || before !== print;
  }

  /** The operator wrote `obj` itself: an event carrying exactly this is no news. */
  expect(obj: T): void {
    this.#seen.set(keyOf(obj), shortHash(this.#fingerprint(obj), 64));
  }
}

const owner = (o: KubernetesObject) => [o.metadata?.labels?.[INSTANCE], o.metadata?.labels?.[COMPONENT]];

type Fingerprint<T> = (obj: T) => unknown;

/** What the operator reads of each kind it watches (observe.ts, plan); a Secret's and a ConfigMap's alike. */
export const fingerprints: {
  [K in Exclude<keyof Watched, 'secret' | 'configMap'>]: Fingerprint<Watched[K]>;
} & {
  source: Fingerprint<Source>;
} = {
  object: (o) => ({
    generation: o.metadata.generation,
    labels: o.metadata.labels,
    annotations: o.metadata.annotations,
    deleting: (o.metadata as KubernetesObject['metadata'])?.deletionTimestamp,
    status: o.status,
  }),
  deployment: (d) => [owner(d), observedDeployment(d)],
  service: (s) => [owner(s), s.metadata?.annotations?.[SPEC_HASH_ANNOTATION]],
  disruptionBudget: (b) => [owner(b), b.metadata?.annotations?.[SPEC_HASH_ANNOTATION]],
  networkPolicy: (n) => [owner(n), n.metadata?.annotations?.[SPEC_HASH_ANNOTATION]],
  job: (j) => [owner(j), observedJob(j)],
  pod: (p) => [owner(p), p.metadata?.deletionTimestamp, p.status?.phase, isReady(p), p.status?.podIP],
  source: (o) => [o.data, (o as Watched['configMap']).binaryData],
};
