/**
 * Login rate limiting: failed sign-ins are counted per key (the email, and the client address) in
 * fixed windows; past a key's limit every attempt on it is refused until its window ends, so a
 * password cannot be guessed faster than `limit` tries per window. Per process (each web replica
 * counts its own). Pure: the clock is passed in.
 */
export interface ThrottleRule {
  limit: number;
  windowMs: number;
}

export const LOGIN_RULES = {
  email: { limit: 5, windowMs: 15 * 60_000 },
  address: { limit: 30, windowMs: 15 * 60_000 },
} as const satisfies Record<string, ThrottleRule>;

const MAX_KEYS = 50_000;

export class LoginThrottle {
  readonly #windows = new Map<string, { start: number; failures: number; rule: ThrottleRule }>();

  /** Seconds until `keys` may try again, or undefined when none of them is over its limit. */
  retryAfter(keys: [string, ThrottleRule][], now: number): number | undefined {
    let wait = 0;
    for (const [key] of keys) {
      const w = this.#windows.get(key);
      if (!w || now - w.start >= w.rule.windowMs || w.failures < w.rule.limit) continue;
      wait = Math.max(wait, Math.ceil((w.start + w.rule.windowMs - now) / 1000));
    }
    return wait > 0 ? wait : undefined;
  }

  fail(keys: [string, ThrottleRule][], now: number): void {
    if (this.#windows.size > MAX_KEYS) this.#prune(now);
    for (const [key, rule] of keys) {
      const w = this.#windows.get(key);
      if (!w || now - w.start >= rule.windowMs) this.#windows.set(key, { start: now, failures: 1, rule });
      else w.failures++;
    }
  }

  /** A successful sign-in clears its email's count (not the address's). */
  succeed(key: string): void {
    this.#windows.delete(key);
  }

  #prune(now: number): void {
    for (const [k, w] of this.#windows) if (now - w.start >= w.rule.windowMs) this.#windows.delete(k);
  }
}

export const loginKeys = (email: string, address: string): [string, ThrottleRule][] => [
  [`email:${email}`, LOGIN_RULES.email],
  [`address:${address}`, LOGIN_RULES.address],
];
