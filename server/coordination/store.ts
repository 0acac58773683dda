/**
 * The small key-value surface the worker coordinates through: heartbeats, the propagation cursor
 * and leases. Redis in deployments; an in-process map for the one-process `dev` mode.
 */
import { Redis } from 'ioredis';

export interface Coordination {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  /** Takes the lease when free or already ours, for `ttlMs`; true when we hold it afterwards. */
  acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean>;
  releaseLease(key: string, owner: string): Promise<void>;
  ping(): Promise<void>;
  /** The server's INFO text ('' for the in-process store). */
  info(): Promise<string>;
  close(): Promise<void>;
}

// Atomic "take or renew if mine": a lease held by another owner is left alone until it expires.
const ACQUIRE = `local v = redis.call('GET', KEYS[1])
if v == false or v == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export function redisCoordination(url: string): Coordination {
  const redis = new Redis(url, { maxRetriesPerRequest: 2, connectTimeout: 2_000, lazyConnect: false });
  redis.on('error', () => {}); // reconnects on its own; callers see failures on their commands
  return {
    get: (key) => redis.get(key),
    async set(key, value) {
      await redis.set(key, value);
    },
    async acquireLease(key, owner, ttlMs) {
      return (await redis.eval(ACQUIRE, 1, key, owner, String(ttlMs))) === 1;
    },
    async releaseLease(key, owner) {
      await redis.eval(RELEASE, 1, key, owner);
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
  const leases = new Map<string, { owner: string; until: number }>();
  return {
    get: async (key) => values.get(key) ?? null,
    async set(key, value) {
      values.set(key, value);
    },
    async acquireLease(key, owner, ttlMs) {
      const l = leases.get(key);
      if (l && l.owner !== owner && l.until > Date.now()) return false;
      leases.set(key, { owner, until: Date.now() + ttlMs });
      return true;
    },
    async releaseLease(key, owner) {
      if (leases.get(key)?.owner === owner) leases.delete(key);
    },
    async ping() {},
    info: async () => '',
    async close() {},
  };
}
