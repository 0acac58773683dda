/**
 * Sign-in that holds, against `observatory web` processes sharing real PostgreSQL and Redis:
 * attempts are counted before the password check (40 parallel sign-ins: at most the limit are
 * checked), one limit across two web processes, per (account, address) so a stranger cannot lock
 * the owner out, the client address only from a trusted proxy, per-address limits across accounts,
 * the throttle's rules in Redis as in-process, a password policy, sessions that end on a password
 * change, the Secure flag from configuration, and a NUL in Basic auth answered 401.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureUiBuilt } from '../../scripts/build-ui.ts';
import { redisSignInThrottle } from '../../server/features/users/login-throttle.ts';
import { type PostgresFixture, startPostgres } from '../fixtures/postgres.ts';
import { type RedisFixture, startRedis } from '../fixtures/redis.ts';
import {
  type AnalyticsServer,
  cli,
  createProject,
  type Env,
  ROOT,
  startAnalyticsServer,
  startWeb,
  type WebServer,
} from '../fixtures/service.ts';
import { SCENARIO_RULES, throttleScenario } from '../fixtures/sign-in-throttle.ts';
import { type Browser, createUiUser, openBrowser, request, signIn } from '../fixtures/ui-client.ts';

let pgf: PostgresFixture;
let ch: AnalyticsServer;
let redis: RedisFixture;
let base: Env;
/** Two replicas behind a proxy on 127.0.0.1 sharing Redis; `direct` trusts no proxy and has a public https URL. */
let web1: WebServer;
let web2: WebServer;
let direct: WebServer;

const PER_ADDRESS = 12;

beforeAll(async () => {
  await ensureUiBuilt();
  // A Redis of this file's own (never a shared REDIS_URL): its counts must start empty, and the last
  // test stops it.
  [pgf, ch, redis] = await Promise.all([
    startPostgres(),
    startAnalyticsServer(),
    startRedis({ host: '127.0.0.1' }),
  ]);
  base = { DATABASE_URL: pgf.url, CLICKHOUSE_URL: ch.url };
  const replica = {
    ...base,
    REDIS_URL: redis.url,
    SERVICE_TRUSTED_PROXIES: '127.0.0.1',
    SERVICE_AUTH_SIGNIN_LIMIT_PER_ADDRESS: String(PER_ADDRESS),
  };
  web1 = await startWeb(replica);
  [web2, direct] = await Promise.all([
    startWeb(replica),
    startWeb({ ...base, SERVICE_PUBLIC_URL: 'https://obs.example.com', AUTH_SESSION_MAX_AGE: '90' }),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all([web1?.stop(), web2?.stop(), direct?.stop()]);
  await Promise.all([ch?.stop(), pgf?.stop(), redis?.stop()]);
});

const user = (email: string) => createUiUser(base, email, ['--org', 'default']);

/** One sign-in from `address` (as the trusted proxy on 127.0.0.1 forwards it), with a fresh CSRF pair. */
async function attempt(url: string, email: string, password: string, headers: Record<string, string> = {}) {
  const b = await openBrowser(url);
  return request(b, 'POST', '/api/ui/auth/login', {
    body: { email, password },
    headers: { 'x-csrf-token': b.csrf, ...headers },
  });
}
const from = (address: string) => ({ 'x-forwarded-for': address });
const statuses = (rs: { status: number }[]) => rs.map((r) => r.status).sort();

describe('sign-in limits', () => {
  it('checks at most the limit of 40 parallel sign-ins for one email from one address', async () => {
    const u = await user('parallel@example.com');
    const rs = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        attempt(web1.url, u.email, i === 39 ? u.password : `wrong-${i}`, from('10.1.0.1')),
      ),
    );
    const checked = rs.filter((r) => r.status === 401 || r.status === 200);
    expect(checked.length, JSON.stringify(statuses(rs))).toBeLessThanOrEqual(5);
    expect(rs.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(35);
    expect(rs.every((r) => [200, 401, 429].includes(r.status))).toBe(true);
  });

  it('enforces one limit across two web processes sharing Redis', async () => {
    const u = await user('replicas@example.com');
    const rs = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        attempt(i % 2 ? web1.url : web2.url, u.email, `wrong-${i}`, from('10.2.0.1')),
      ),
    );
    expect(rs.filter((r) => r.status === 401).length, JSON.stringify(statuses(rs))).toBe(5);
    expect(rs.filter((r) => r.status === 429).length).toBe(7);
    const late = await attempt(web2.url, u.email, u.password, from('10.2.0.1'));
    expect(late.status).toBe(429);
    expect(Number(late.headers.get('retry-after'))).toBeGreaterThan(800);
  });

  it("does not let a stranger's failures from another address lock out the owner's right password", async () => {
    const u = await user('owner-of-it@example.com');
    const stranger = [];
    for (let i = 0; i < 8; i++)
      stranger.push((await attempt(web1.url, u.email, `guess-${i}`, from('10.3.0.66'))).status);
    expect(stranger).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    expect((await attempt(web2.url, u.email, u.password, from('10.3.0.7'))).status).toBe(200);
  });

  it('takes the client address from the trusted proxy only: X-Forwarded-For from anyone else is ignored', async () => {
    const u = await user('no-spoofing@example.com');
    const rs = [];
    // `direct` trusts no proxy: every attempt is 127.0.0.1's, whatever address the header claims.
    for (let i = 0; i < 6; i++)
      rs.push((await attempt(direct.url, u.email, `wrong-${i}`, from(`10.4.0.${i}`))).status);
    expect(rs).toEqual([401, 401, 401, 401, 401, 429]);
    expect((await attempt(direct.url, u.email, u.password, from('10.4.0.99'))).status).toBe(429);
  });

  it('limits one address across accounts, on both replicas', async () => {
    const rs = [];
    for (let i = 0; i <= PER_ADDRESS; i++) {
      rs.push(
        (
          await attempt(
            i % 2 ? web1.url : web2.url,
            `nobody-${i}@example.com`,
            'whatever-it-is',
            from('10.5.0.1'),
          )
        ).status,
      );
    }
    expect(rs).toEqual([...Array(PER_ADDRESS).fill(401), 429]);
    // Another address is not held by it.
    expect((await attempt(web1.url, 'nobody@example.com', 'whatever-it-is', from('10.5.0.2'))).status).toBe(
      401,
    );
  });

  it('follows the same rules in Redis as in-process', async () => {
    const client = new Redis(redis.url);
    try {
      await throttleScenario(
        redisSignInThrottle(client, SCENARIO_RULES),
        `scenario-${Date.now()}@example.com`,
      );
    } finally {
      client.disconnect();
    }
  });
});

describe('passwords and sessions', () => {
  const change = (b: Browser, currentPassword: string, newPassword: string) =>
    request(b, 'POST', '/api/ui/auth/password', {
      body: { currentPassword, newPassword },
      headers: { 'x-csrf-token': b.csrf },
    });

  it('ends every session of the user on a password change; the one who changed it gets a new one', async () => {
    const u = await user('changer@example.com');
    const other = await signIn(web1.url, u);
    const me = await signIn(web1.url, u);
    const r = await change(me, u.password, 'a-brand-new-passphrase-42');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    me.csrf = r.body.csrfToken;
    expect((await request(other, 'GET', '/api/ui/projects')).status).toBe(401);
    expect((await request(me, 'GET', '/api/ui/projects')).status).toBe(200);
    expect((await attempt(web1.url, u.email, u.password, from('10.6.0.1'))).status).toBe(401);
    expect((await attempt(web1.url, u.email, 'a-brand-new-passphrase-42', from('10.6.0.1'))).status).toBe(
      200,
    );
  });

  it('refuses a trivial or wrong-current password change with 4xx naming the field, changing nothing', async () => {
    const u = await user('trivial@example.com');
    const b = await signIn(web1.url, u);
    const trivial = await change(b, u.password, 'aaaaaaaaaaaa');
    expect(trivial.status).toBe(400);
    expect(trivial.body.error).toMatch(/^newPassword: too easy to guess/);
    expect((await change(b, 'not-the-password', 'a-brand-new-passphrase-42')).status).toBe(401);
    expect((await request(b, 'GET', '/api/ui/projects')).status).toBe(200);
  });

  it('create-user refuses a trivial password naming --password-stdin', () => {
    const r = spawnSync(
      process.execPath,
      [
        join(ROOT, 'server/bin/observatory.ts'),
        'create-user',
        '--email',
        'weak@example.com',
        '--password-stdin',
      ],
      {
        input: 'aaaaaaaaaaaa\n',
        env: { PATH: process.env['PATH'], ...base },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--password-stdin: too easy to guess/);
  });
});

describe('cookies', () => {
  const sessionCookie = async (url: string, headers: Record<string, string>) => {
    const u = await user(`cookie-${Math.random().toString(36).slice(2)}@example.com`);
    const r = await attempt(url, u.email, u.password, headers);
    expect(r.status).toBe(200);
    return r.headers.getSetCookie().find((c) => c.startsWith('obs_session='))!;
  };

  it('is Secure when the public URL is https, whatever Host the client names; lives AUTH_SESSION_MAX_AGE', async () => {
    const c = await sessionCookie(direct.url, { host: '127.1.example.com' });
    expect(c).toMatch(/; Secure/);
    expect(c).toMatch(/; Max-Age=5400;/);
  });

  it('without a public URL, is Secure only when the trusted proxy says the request came over https', async () => {
    expect(await sessionCookie(web1.url, { ...from('10.7.0.1'), 'x-forwarded-proto': 'https' })).toMatch(
      /; Secure/,
    );
    expect(await sessionCookie(web1.url, { ...from('10.7.0.2'), host: 'obs.example.com' })).not.toMatch(
      /Secure/,
    );
  });
});

describe('Basic auth', () => {
  it('answers a NUL in the key with 401 naming the problem', async () => {
    const p = await createProject(base, 'nul');
    for (const creds of [`${p.publicKey}\0:${p.secretKey}`, `${p.publicKey}:${p.secretKey}\0`]) {
      const res = await fetch(`${web1.url}/api/public/projects`, {
        headers: { authorization: `Basic ${Buffer.from(creds).toString('base64')}` },
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { message: string }).message).toMatch(
        /control character \(such as NUL\)/,
      );
    }
  });
});

describe('configuration', () => {
  it('refuses to start on a bad trusted-proxy setting, in one line naming the variable', async () => {
    const r = await cli(['web'], { ...base, SERVICE_TRUSTED_PROXIES: 'anyone' });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('SERVICE_TRUSTED_PROXIES=anyone is not');
  });
});

describe('Redis down', () => {
  it('refuses sign-ins with 503 and Retry-After instead of checking passwords unthrottled', async () => {
    const u = await user('redis-down@example.com');
    await redis.stop();
    const r = await attempt(web1.url, u.email, u.password, from('10.8.0.1'));
    expect(r.status, JSON.stringify(r.body)).toBe(503);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
