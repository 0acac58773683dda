/**
 * Sign-in throttling, counted before the password is checked so concurrent attempts cannot slip
 * past the limit while the slow hash runs. Two rules (OWASP's authentication guidance: lock out by
 * account and address, slow the account down instead of locking it):
 *  - per (account, client address): `pairLimit` attempts per window, then that pair is refused until
 *    the window ends. A stranger exhausting it from their address does not touch the owner's pair.
 *  - per account, from addresses the account never signed in from: past `accountFreeAttempts` in
 *    `accountWindowMs`, every further attempt closes the account to such addresses for a delay that
 *    doubles up to `accountMaxDelayMs`. This slows guessing spread over many addresses; addresses
 *    the account signed in from before (remembered `knownAddressMs`) are not delayed.
 * The per-address limit over all accounts is @fastify/rate-limit's (plugins/ui-auth.ts).
 * Redis (shared by every replica, one Lua script so each attempt is counted atomically) or an
 * in-process store with the same behaviour for the one-process `observatory dev`.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface SignInRules {
  pairLimit: number;
  pairWindowMs: number;
  accountFreeAttempts: number;
  accountWindowMs: number;
  accountBaseDelayMs: number;
  accountMaxDelayMs: number;
  knownAddressMs: number;
}

export const SIGN_IN_WINDOW_MS = 15 * 60_000;

export const signInRules = (pairLimit: number): SignInRules => ({
  pairLimit,
  pairWindowMs: SIGN_IN_WINDOW_MS,
  accountFreeAttempts: 10,
  accountWindowMs: 60 * 60_000,
  accountBaseDelayMs: 1_000,
  accountMaxDelayMs: 30_000,
  knownAddressMs: 30 * 24 * 3600_000,
});

/** The delay after the `over`-th attempt past the account's free ones: 1 s, 2 s, 4 s, ... capped. */
export const accountDelayMs = (rules: SignInRules, over: number): number =>
  Math.min(rules.accountBaseDelayMs * 2 ** (over - 1), rules.accountMaxDelayMs);

export interface SignInThrottle {
  /** Counts one attempt; undefined: check the password; a number: refused, retry after that many seconds. */
  attempt(account: string, address: string): Promise<number | undefined>;
  /** The right password: the pair starts afresh and the address is known to the account. */
  succeeded(account: string, address: string): Promise<void>;
}

const digest = (s: string) => createHash('sha256').update(s).digest('base64url').slice(0, 22);
const keysOf = (account: string, address: string) => {
  const a = digest(account);
  const pair = digest(`${account}\n${address}`);
  return {
    pair: `signin:pair:${pair}`,
    known: `signin:known:${pair}`,
    account: `signin:account:${a}`,
    gate: `signin:gate:${a}`,
  };
};
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

// KEYS: pair, known, account, gate. ARGV: the rules. Returns 0 (check it) or the wait in ms.
const ATTEMPT = `local known = redis.call('EXISTS', KEYS[2]) == 1
if not known then
  local gate = redis.call('PTTL', KEYS[4])
  if gate > 0 then return gate end
end
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n > tonumber(ARGV[1]) then
  local t = redis.call('PTTL', KEYS[1])
  if t < 1 then t = 1 end
  return t
end
if not known then
  local a = redis.call('INCR', KEYS[3])
  if a == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[4]) end
  local over = a - tonumber(ARGV[3])
  if over > 0 then
    local d = math.min(tonumber(ARGV[5]) * 2 ^ (over - 1), tonumber(ARGV[6]))
    redis.call('SET', KEYS[4], '1', 'PX', math.floor(d))
  end
end
return 0`;

export function redisSignInThrottle(redis: Redis, rules: SignInRules): SignInThrottle {
  const args = [
    rules.pairLimit,
    rules.pairWindowMs,
    rules.accountFreeAttempts,
    rules.accountWindowMs,
    rules.accountBaseDelayMs,
    rules.accountMaxDelayMs,
  ].map(String);
  return {
    async attempt(account, address) {
      const k = keysOf(account, address);
      const wait = Number(await redis.eval(ATTEMPT, 4, k.pair, k.known, k.account, k.gate, ...args));
      return wait > 0 ? seconds(wait) : undefined;
    },
    async succeeded(account, address) {
      const k = keysOf(account, address);
      await redis.multi().del(k.pair).set(k.known, '1', 'PX', rules.knownAddressMs).exec();
    },
  };
}

/** Entries beyond which expired ones are dropped, so the maps stay bounded under a spray of names. */
const PRUNE_AT = 50_000;

export function memorySignInThrottle(rules: SignInRules, now: () => number = Date.now): SignInThrottle {
  // key -> [count, expiresAt]; a gate or known marker has count 0.
  const entries = new Map<string, [number, number]>();
  // Pruning walks every entry: done again only once the map has doubled, so its cost is amortised.
  let pruneAt = PRUNE_AT;
  const live = (key: string, t: number) => {
    const e = entries.get(key);
    if (e && e[1] > t) return e;
    entries.delete(key);
    return undefined;
  };
  const incr = (key: string, ttlMs: number, t: number) => {
    const e = live(key, t) ?? [0, t + ttlMs];
    e[0]++;
    entries.set(key, e);
    return e;
  };
  return {
    async attempt(account, address) {
      const t = now();
      if (entries.size > pruneAt) {
        for (const k of entries.keys()) live(k, t);
        pruneAt = Math.max(PRUNE_AT, 2 * entries.size);
      }
      const k = keysOf(account, address);
      const known = live(k.known, t) !== undefined;
      const gate = known ? undefined : live(k.gate, t);
      if (gate) return seconds(gate[1] - t);
      const pair = incr(k.pair, rules.pairWindowMs, t);
      if (pair[0] > rules.pairLimit) return seconds(pair[1] - t);
      if (!known) {
        const over = incr(k.account, rules.accountWindowMs, t)[0] - rules.accountFreeAttempts;
        if (over > 0) entries.set(k.gate, [0, t + accountDelayMs(rules, over)]);
      }
      return undefined;
    },
    async succeeded(account, address) {
      const k = keysOf(account, address);
      entries.delete(k.pair);
      entries.set(k.known, [0, now() + rules.knownAddressMs]);
    },
  };
}
