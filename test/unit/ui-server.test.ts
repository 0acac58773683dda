/**
 * The web UI's server-side pure parts, by tables: password hashes, cookies, the login throttle,
 * search snippets, the table's sort orders and full-text condition, row scores.
 */
import { describe, expect, it } from 'vitest';
import { buildObservationList, nextCursor, parseObservationCursor } from '../../server/reads/observations.ts';
import { indexScores, scoresOfRow } from '../../server/reads/row-scores.ts';
import { snippetOf } from '../../server/reads/search-snippet.ts';
import { LOGIN_RULES, LoginThrottle, loginKeys } from '../../server/users/login-throttle.ts';
import { hashPassword, verifyPassword } from '../../server/users/passwords.ts';
import { effectiveRole } from '../../server/users/roles.ts';
import { parseCookies, secureFor, serializeCookie } from '../../server/web/cookies.ts';

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
  it.each([
    [undefined, {}],
    ['a=1; b=two', { a: '1', b: 'two' }],
    ['a=1; a=2', { a: '1' }],
    ['x=%E2%9C%93; bad=%E2; =v; flag', { x: '✓' }],
  ])('parses %s', (header, cookies) => expect(parseCookies(header)).toEqual(cookies));

  it('serializes HttpOnly, SameSite and Secure', () => {
    expect(serializeCookie('s', 'a b', { maxAgeSeconds: 60, secure: true, sameSite: 'Lax' })).toBe(
      's=a%20b; Path=/; Max-Age=60; HttpOnly; SameSite=Lax; Secure',
    );
  });

  it.each([
    ['127.0.0.1:3000', 'http', false],
    ['localhost', 'http', false],
    ['[::1]:3000', 'http', false],
    ['obs.example.com', 'http', true],
    ['127.0.0.1', 'https', true],
  ])('Secure for host %s over %s: %s', (host, proto, secure) => expect(secureFor(host, proto)).toBe(secure));
});

describe('login throttle', () => {
  it('refuses an email after its limit of failures until its window ends; success clears it', () => {
    const t = new LoginThrottle();
    const keys = loginKeys('a@x', '10.0.0.1');
    const w = LOGIN_RULES.email.windowMs;
    for (let i = 0; i < LOGIN_RULES.email.limit; i++) {
      expect(t.retryAfter(keys, 1000)).toBeUndefined();
      t.fail(keys, 1000);
    }
    expect(t.retryAfter(keys, 1000)).toBe(w / 1000);
    expect(t.retryAfter(keys, 1000 + w - 1)).toBe(1);
    expect(t.retryAfter(keys, 1000 + w)).toBeUndefined();
    // Another email from the same address is not held by the first email's count.
    expect(t.retryAfter(loginKeys('b@x', '10.0.0.1'), 1000)).toBeUndefined();
    t.succeed(keys[0]![0]);
    expect(t.retryAfter(keys, 1000)).toBeUndefined();
  });

  it('refuses an address that tries many emails', () => {
    const t = new LoginThrottle();
    for (let i = 0; i < LOGIN_RULES.address.limit; i++) t.fail(loginKeys(`u${i}@x`, '10.0.0.2'), 0);
    expect(t.retryAfter(loginKeys('new@x', '10.0.0.2'), 0)).toBeGreaterThan(0);
    expect(t.retryAfter(loginKeys('new@x', '10.0.0.3'), 0)).toBeUndefined();
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
