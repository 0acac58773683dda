/**
 * The small key-value surface the worker coordinates through: heartbeats, the propagation cursor
 * and leases. Redis in deployments; an in-process map for the one-process `dev` mode.
 */
import { Redis } from 'ioredis';

/** Who holds a lease: this process, and the stable identity it runs under (if any). */
export interface LeaseHolder {
  /** Unique to this process: a restart is another process. */
  process: string;
  /**
   * Stable across restarts and unique among live processes (the Pod name): a holder of the same
   * identity and another process has died, since its successor runs, so its lease is taken at once.
   * Absent: the lease is taken only once free or expired.
   */
  identity?: string | undefined;
}

export interface Coordination {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  /**
   * Takes the lease when free, already ours or held by a dead process of our identity, for `ttlMs`;
   * true when we hold it afterwards.
   */
  acquireLease(key: string, holder: LeaseHolder, ttlMs: number): Promise<boolean>;
  /** Extends the lease by `ttlMs` only while we still hold it; false when it was lost. */
  renewLease(key: string, holder: LeaseHolder, ttlMs: number): Promise<boolean>;
  releaseLease(key: string, holder: LeaseHolder): Promise<void>;
  ping(): Promise<void>;
  /** The server's INFO text ('' for the in-process store). */
  info(): Promise<string>;
  close(): Promise<void>;
}

// The identity is encoded, so it holds no '/' and one identity is never a prefix of another's value.
const identityPrefix = (h: LeaseHolder) => (h.identity ? `${encodeURIComponent(h.identity)}/` : '');
const leaseValue = (h: LeaseHolder) => `${identityPrefix(h) || '/'}${h.process}`;

// Atomic "take if free, ours, or our identity's": a lease another identity holds is left until it expires.
const ACQUIRE = `local v = redis.call('GET', KEYS[1])
if v == false or v == ARGV[1] or (ARGV[3] ~= '' and string.sub(v, 1, string.len(ARGV[3])) == ARGV[3]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export function redisCoordination(url: string): Coordination {
  const redis = new Redis(url, { maxRetriesPerRequest: 2, connectTimeout: 2_000, lazyConnect: false });
  redis.on('error', () => {}); // reconnects on its own; callers see failures on their commands
  return {
    get: (key) => redis.get(key),
    async set(key, value) {
      await redis.set(key, value);
    },
    async acquireLease(key, holder, ttlMs) {
      const held = await redis.eval(
        ACQUIRE,
        1,
        key,
        leaseValue(holder),
        String(ttlMs),
        identityPrefix(holder),
      );
      return held === 1;
    },
    async renewLease(key, holder, ttlMs) {
      return (await redis.eval(RENEW, 1, key, leaseValue(holder), String(ttlMs))) === 1;
    },
    async releaseLease(key, holder) {
      await redis.eval(RELEASE, 1, key, leaseValue(holder));
    },
    async ping() {
      await redis.ping();
    },
    info: () => redis.info('server'),
    async close() {
      redis.disconnect();
    },
  };
}

export function memoryCoordination(): Coordination {
  const values = new Map<string, string>();
  const leases = new Map<string, { value: string; until: number }>();
  const live = (key: string) => {
    const l = leases.get(key);
    return l && l.until > Date.now() ? l : undefined;
  };
  return {
    get: async (key) => values.get(key) ?? null,
    async set(key, value) {
      values.set(key, value);
    },
    async acquireLease(key, holder, ttlMs) {
      const l = live(key);
      const mine = leaseValue(holder);
      const prefix = identityPrefix(holder);
      if (l && l.value !== mine && (prefix === '' || !l.value.startsWith(prefix))) return false;
      leases.set(key, { value: mine, until: Date.now() + ttlMs });
      return true;
    },
    async renewLease(key, holder, ttlMs) {
      const l = live(key);
      if (l?.value !== leaseValue(holder)) return false;
      l.until = Date.now() + ttlMs;
      return true;
    },
    async releaseLease(key, holder) {
      if (leases.get(key)?.value === leaseValue(holder)) leases.delete(key);
    },
    async ping() {},
    info: async () => '',
    async close() {},
  };
}
