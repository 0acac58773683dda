/**
 * The web UI's server-side pure parts, by tables: password hashes and policy, cookies, the sign-in
 * throttle's in-process store,
 * search snippets, the table's sort orders and full-text condition, row scores.
 */
import fastifyCookie from '@fastify/cookie';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { trustProxyOption } from '../../server/app/web/app.ts';
import {
  COOKIE_PLUGIN_OPTIONS,
  type CookieOptions,
  cookieAttributes,
  secureFor,
} from '../../server/app/web/ui-shell/cookies.ts';
import {
  buildObservationList,
  nextCursor,
  parseObservationCursor,
} from '../../server/features/reads/observations.ts';
import { indexScores, scoresOfRow } from '../../server/features/reads/row-scores.ts';
import { snippetOf } from '../../server/features/reads/search-snippet.ts';
import {
  accountDelayMs,
  memorySignInThrottle,
  signInRules,
} from '../../server/features/users/login-throttle.ts';
import { passwordProblem } from '../../server/features/users/password-policy.ts';
import { hashPassword, verifyPassword } from '../../server/features/users/passwords.ts';
import type { TrustedProxies } from '../../server/kernel/config/auth.ts';
import { effectiveRole } from '../../server/kernel/roles.ts';
import { SCENARIO_RULES, throttleScenario } from '../fixtures/sign-in-throttle.ts';

describe('passwords', () => {
  it('hashes with Argon2id in a PHC string, salted, and verifies only the same password', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterz', a)).toBe(false);
  });

  it('verifies an scrypt hash (the fallback of a Node without argon2) and refuses malformed hashes', async () => {
    // scrypt N=2^4 of "pw" with salt "salt" (RFC 7914 parameters scaled down), computed independently.
    const { scryptSync } = await import('node:crypto');
    const key = scryptSync('pw', Buffer.from('salt'), 32, { N: 16, r: 8, p: 1 })
      .toString('base64')
      .replace(/=+$/, '');
    const stored = `$scrypt$ln=4,r=8,p=1$${Buffer.from('salt').toString('base64').replace(/=+$/, '')}$${key}`;
    expect(await verifyPassword('pw', stored)).toBe(true);
    expect(await verifyPassword('px', stored)).toBe(false);
    for (const bad of ['', 'plain', '$md5$x$y', '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA'])
      expect(await verifyPassword('pw', bad)).toBe(false);
  });
});

describe('cookies', () => {
  /** A server with the UI's cookie plugin: echoes the request's cookies, sets the one it is asked for. */
  async function cookieServer(set?: { name: string; value: string; options: CookieOptions }) {
    const app = Fastify();
    await app.register(fastifyCookie, COOKIE_PLUGIN_OPTIONS);
    app.get('/', async (req, reply) => {
      if (set) reply.setCookie(set.name, set.value, cookieAttributes(set.options));
      return { ...req.cookies };
    });
    return app;
  }

  it.each([
    [undefined, {}],
    ['a=1; b=two', { a: '1', b: 'two' }],
    ['a=1; a=2', { a: '1' }],
    // A pair without a name (RFC 6265 has none, browsers send none) reads as the name '', which
    // nothing asks for.
    ['x=%E2%9C%93; bad=%E2; =v; flag', { x: '✓', '': 'v' }],
  ])('parses %s', async (header, cookies) => {
    const app = await cookieServer();
    const res = await app.inject({ url: '/', headers: header === undefined ? {} : { cookie: header } });
    expect(res.json()).toEqual(cookies);
  });

  it('serializes HttpOnly, SameSite and Secure', async () => {
    const app = await cookieServer({
      name: 's',
      value: 'a b',
      options: { maxAgeSeconds: 60, secure: true, sameSite: 'lax' },
    });
    const header = (await app.inject({ url: '/' })).headers['set-cookie'];
    // Attribute order carries no meaning (RFC 6265 section 5.2).
    expect(new Set(String(header).split('; '))).toEqual(
      new Set('s=a%20b; Path=/; Max-Age=60; HttpOnly; SameSite=Lax; Secure'.split('; ')),
    );
  });

  it.each([
    [undefined, 'http', false],
    [undefined, 'https', true],
    ['https://obs.example.com', 'http', true],
    ['http://127.0.0.1:3000', 'https', false],
  ])('Secure with public URL %s, request over %s: %s', (url, proto, secure) =>
    expect(secureFor(url === undefined ? undefined : new URL(url), proto)).toBe(secure),
  );
});

describe('client address and scheme behind proxies', () => {
  // The peer is the socket's address; X-Forwarded-For is "10.0.0.1, 10.0.0.2" (the client, then a
  // proxy), X-Forwarded-Proto https: believed only as far as the configured proxies reach.
  it.each([
    [false, '127.0.0.1', '127.0.0.1', 'http'],
    [true, '127.0.0.1', '10.0.0.1', 'https'],
    [1, '127.0.0.1', '10.0.0.2', 'https'],
    [2, '127.0.0.1', '10.0.0.1', 'https'],
    [['127.0.0.1'], '127.0.0.1', '10.0.0.2', 'https'],
    [['127.0.0.1', '10.0.0.2'], '127.0.0.1', '10.0.0.1', 'https'],
    [['192.0.2.0/24'], '203.0.113.9', '203.0.113.9', 'http'],
  ] as const)('trusting %j, peer %s: address %s over %s', async (proxies, peer, ip, protocol) => {
    const app = Fastify({ trustProxy: trustProxyOption(proxies as TrustedProxies) });
    app.get('/', async (req) => ({ ip: req.ip, protocol: req.protocol }));
    const res = await app.inject({
      url: '/',
      remoteAddress: peer,
      headers: { 'x-forwarded-for': '10.0.0.1, 10.0.0.2', 'x-forwarded-proto': 'https' },
    });
    expect(res.json()).toEqual({ ip, protocol });
    await app.close();
  });
});

describe('password policy', () => {
  it.each([
    ['aaaaaaaaaaaa', 'too easy to guess'],
    ['123456789012', 'too easy to guess'],
    ['password1234', 'too easy to guess'],
    ['qwertyuiop12', 'too easy to guess'],
    ['iloveyou12345', 'too easy to guess'],
    ['short-pw', 'at least 12 characters'],
    ['x'.repeat(1025), 'at most 1024 characters'],
  ])('refuses %s naming the field: %s', (password, why) =>
    expect(passwordProblem(password, 'newPassword')).toMatch(new RegExp(`^newPassword: ${why}`)),
  );

  it('accepts long unguessable passwords and refuses one made of the email', () => {
    for (const ok of ['correcthorsebatterystaple', 'ZnmKq7-t2xWv9pLr', 'a-long-enough-password'])
      expect(passwordProblem(ok)).toBeUndefined();
    expect(passwordProblem('ada@example.com', 'password', ['ada@example.com'])).toMatch(
      /^password: too easy/,
    );
  });
});

describe('sign-in throttle (in-process store)', () => {
  it('follows the rules: per (account, address), a growing delay for unknown addresses', async () => {
    let now = 1_000_000;
    await throttleScenario(
      memorySignInThrottle(SCENARIO_RULES, () => now),
      'ada@example.com',
    );
    // Windows end: the stranger's pair and the account's delay expire.
    now += SCENARIO_RULES.pairWindowMs;
    const t = memorySignInThrottle(SCENARIO_RULES, () => now);
    expect(await t.attempt('ada@example.com', '10.6.6.6')).toBeUndefined();
  });

  it('expires a pair at the end of its window', async () => {
    let now = 0;
    const t = memorySignInThrottle({ ...SCENARIO_RULES, accountFreeAttempts: 100 }, () => now);
    for (let i = 0; i < SCENARIO_RULES.pairLimit; i++)
      expect(await t.attempt('b@x', '10.0.0.9')).toBeUndefined();
    expect(await t.attempt('b@x', '10.0.0.9')).toBe(60);
    now = SCENARIO_RULES.pairWindowMs - 1;
    expect(await t.attempt('b@x', '10.0.0.9')).toBe(1);
    now = SCENARIO_RULES.pairWindowMs;
    expect(await t.attempt('b@x', '10.0.0.9')).toBeUndefined();
  });

  it('closes the account to unknown addresses for the delay, then opens it', async () => {
    let now = 0;
    const t = memorySignInThrottle({ ...SCENARIO_RULES, accountFreeAttempts: 1 }, () => now);
    expect(await t.attempt('c@x', '10.0.1.1')).toBeUndefined();
    expect(await t.attempt('c@x', '10.0.1.2')).toBeUndefined();
    expect(await t.attempt('c@x', '10.0.1.3')).toBe(10);
    now = SCENARIO_RULES.accountBaseDelayMs;
    expect(await t.attempt('c@x', '10.0.1.3')).toBeUndefined();
    expect(await t.attempt('c@x', '10.0.1.4')).toBe(20);
  });

  it('doubles the account delay from the base up to the cap', () => {
    const r = signInRules(5);
    expect([1, 2, 3, 5, 6, 10].map((over) => accountDelayMs(r, over))).toEqual([
      1000, 2000, 4000, 16_000, 30_000, 30_000,
    ]);
  });
});

describe('roles', () => {
  it.each([
    ['viewer', 'owner', 'viewer'],
    [null, 'member', 'member'],
    [null, null, null],
  ] as const)('project %s, organization %s -> %s', (p, o, r) => expect(effectiveRole(p, o)).toBe(r));
});

describe('search snippets', () => {
  it.each([
    [
      'aardvark',
      [['input', 'Where does the Aardvark sleep?']],
      { field: 'input', before: 'Where does the ', match: 'Aardvark', after: ' sleep?' },
    ],
    [
      'x',
      [
        ['input', 'abc'],
        ['output', 'xyz'],
      ],
      { field: 'output', before: '', match: 'x', after: 'yz' },
    ],
    [
      'q',
      [['input', `${'a'.repeat(100)}q${'b'.repeat(100)}`]],
      { field: 'input', before: `…${'a'.repeat(60)}`, match: 'q', after: `${'b'.repeat(60)}…` },
    ],
    ['none', [['input', 'abc']], undefined],
    ['  ', [['input', 'abc']], undefined],
  ] as [string, [string, string][], unknown][])('%s', (needle, fields, snippet) => {
    expect(snippetOf(needle, fields)).toEqual(snippet);
  });
});

describe('observations table queries', () => {
  const base = {
    projectId: 'p',
    groups: new Set(['core'] as const),
    filters: [],
    limit: 10,
    textIndex: true,
  };

  it('orders by a column with the start time, trace and span id as tie-breakers, in one direction', () => {
    const q = buildObservationList({ ...base, order: { column: 'latency', dir: 'asc' } });
    expect(q.sql).toMatch(
      /ORDER BY ifNull\(toFloat64\(.*\), -1\) ASC, start_time ASC, trace_id ASC, span_id ASC/,
    );
    expect(q.sql).toContain('AS sort_value');
  });

  it('continues after the cursor of the same order, and refuses a cursor of another order', () => {
    const cursor = parseObservationCursor(
      nextCursor(
        [
          { sort_value: 1.5, start_time: '2026-01-01 00:00:00.000000', trace_id: 't', span_id: 's' },
          { sort_value: 2, start_time: '2026-01-01 00:00:00.000000', trace_id: 't', span_id: 'z' },
        ],
        1,
      ),
    );
    expect(cursor).toEqual({ s: 1.5, t: '2026-01-01 00:00:00.000000', tr: 't', id: 's' });
    const q = buildObservationList({ ...base, cursor, order: { column: 'totalCost', dir: 'desc' } });
    expect(q.sql).toMatch(
      /\(ifNull\(toFloat64\(.*\), -1\), start_time, trace_id, span_id\) < \(\{p\d:Float64\}/,
    );
    expect(() => buildObservationList({ ...base, cursor, order: { column: 'name', dir: 'desc' } })).toThrow(
      /not a cursor of a page ordered by name/,
    );
  });

  it('searches input and output through the text index and metadata values by scan, on events_full', () => {
    const q = buildObservationList({ ...base, search: 'Aardvark burrow' });
    expect(q.table).toBe('events_full');
    expect(q.settings).toEqual({ enable_full_text_index: 1 });
    expect(q.sql).toContain('hasAllTokens(lower(input)');
    expect(q.sql).toContain('hasAllTokens(lower(output)');
    expect(q.sql).toContain("hasToken(lower(arrayStringConcat(metadata_values, '\\n'))");
    expect(Object.values(q.params)).toContainEqual(['aardvark', 'burrow']);
    const scan = buildObservationList({ ...base, search: 'x', textIndex: false });
    expect(scan.sql).not.toContain('hasAllTokens');
    expect(scan.settings).toBeUndefined();
  });
});

describe('row scores', () => {
  const index = indexScores([
    { id: '1', trace_id: 't', observation_id: null, name: 'accuracy', data_type: 'NUMERIC', value: 0.9 },
    {
      id: '2',
      trace_id: 't',
      observation_id: 'g',
      name: 'tone',
      data_type: 'CATEGORICAL',
      string_value: 'polite',
    },
  ]);
  it.each([
    ['root', 'r', true, ['accuracy']],
    ['child with its own score', 'g', false, ['tone']],
    ['child without', 'x', false, []],
  ] as const)('%s', (_, span, root, names) => {
    expect(scoresOfRow(index, 't', span, root).map((s) => s.name)).toEqual(names);
  });
});
