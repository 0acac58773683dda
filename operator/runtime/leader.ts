/**
 * Leader election on a coordination.k8s.io Lease, as client-go does it: take the lease when it is
 * free or expired, renew it well before it expires, and give up leadership (the caller exits) when
 * renewals keep failing past the renew deadline, or at once when the Lease names another holder.
 * Writes use the lease's resourceVersion, so two
 * candidates can never both win the same round.
 */
import { CoordinationV1Api, type KubeConfig, type V1Lease, V1MicroTime } from '@kubernetes/client-node';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

const statusOf = (err: unknown) => (err as { code?: number }).code;

/** Who holds the Lease after one attempt ('unknown': the attempt failed or lost a race). */
type Holder = 'us' | 'another' | 'unknown';

export class LeaderElector {
  readonly #api: CoordinationV1Api;
  readonly #o: Required<Omit<LeaderElectionOptions, 'log'>> & Pick<LeaderElectionOptions, 'log'>;
  #leading = false;
  #stopped = false;
  #lastRenew = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(kc: KubeConfig, options: LeaderElectionOptions) {
    this.#api = kc.makeApiClient(CoordinationV1Api);
    this.#o = { leaseDurationSeconds: 15, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options };
  }

  /**
   * Whether this process may act as the leader now: it won the Lease and renewed it within the
   * renew deadline (a stalled event loop or an unreachable API server ends that on its own).
   */
  get leading(): boolean {
    return this.#leading && Date.now() - this.#lastRenew < this.#o.renewDeadlineMs;
  }

  start(): void {
    const loop = async () => {
      if (this.#stopped) return;
      const held = await this.#tryAcquireOrRenew().catch((err): Holder => {
        this.#o.log?.('lease update failed', { error: (err as Error).message });
        return 'unknown';
      });
      if (held === 'us') {
        this.#lastRenew = Date.now();
        if (!this.#leading) {
          this.#leading = true;
          this.#o.log?.('became leader', { lease: this.#o.name, identity: this.#o.identity });
          this.#o.onStartedLeading();
        }
      } else if (
        this.#leading &&
        (held === 'another' || Date.now() - this.#lastRenew > this.#o.renewDeadlineMs)
      ) {
        this.#leading = false;
        this.#o.log?.('lost leadership', { lease: this.#o.name });
        this.#o.onStoppedLeading();
        return;
      }
      if (!this.#stopped) this.#timer = setTimeout(loop, this.#o.retryPeriodMs);
    };
    void loop();
  }

  async #tryAcquireOrRenew(): Promise<Holder> {
    const { namespace, name, identity, leaseDurationSeconds } = this.#o;
    const now = new V1MicroTime(new Date().toISOString());
    let lease: V1Lease;
    try {
      lease = await this.#api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      await this.#api.createNamespacedLease({
        namespace,
        body: {
          metadata: { name, namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: 0,
          },
        },
      });
      return 'us';
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
    const expired = renewed + (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000 < Date.now();
    if (holder !== '' && holder !== identity && !expired) return 'another';
    const transition = holder !== identity;
    lease.spec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds,
      renewTime: now,
      acquireTime: transition ? now : spec.acquireTime,
      leaseTransitions: (spec.leaseTransitions ?? 0) + (transition ? 1 : 0),
    };
    try {
      await this.#api.replaceNamespacedLease({ name, namespace, body: lease });
      return 'us';
    } catch (err) {
      if (statusOf(err) === 409) return 'unknown'; // another candidate wrote first: read again
      throw err;
    }
  }

  /** Stops campaigning and frees the lease so a successor takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    if (!this.#leading) return;
    this.#leading = false;
    try {
      const lease = await this.#api.readNamespacedLease({ name: this.#o.name, namespace: this.#o.namespace });
      if (lease.spec?.holderIdentity === this.#o.identity) {
        lease.spec.holderIdentity = '';
        await this.#api.replaceNamespacedLease({
          name: this.#o.name,
          namespace: this.#o.namespace,
          body: lease,
        });
      }
    } catch {
      // The lease expires on its own.
    }
  }
}
