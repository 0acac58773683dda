/**
 * What the CLI prints when a command fails: one line naming what failed (never a stack unless
 * `--verbose`), with any URL's password hidden; `--verbose` is the CLI's own flag.
 */
import { describe, expect, it } from 'vitest';
import { describeFailure, failureDetail, hideUrlCredentials } from '../../server/cli/failure.ts';
import { takeVerbose } from '../../server/cli/main.ts';

const pgError = Object.assign(new Error('password authentication failed for user "postgres"'), {
  severity: 'FATAL',
  code: '28P01',
});
const refused = (address: string) =>
  Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });

describe('describeFailure', () => {
  it.each([
    [
      'a PostgreSQL error names PostgreSQL',
      pgError,
      'PostgreSQL: password authentication failed for user "postgres"',
    ],
    ['a plain error is its message', new Error('disk full'), 'disk full'],
    [
      'an empty AggregateError lists what was refused, once each',
      new AggregateError([refused('::1:5432'), refused('127.0.0.1:5432'), refused('127.0.0.1:5432')], ''),
      'connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432',
    ],
    ['an error without a message is its code', Object.assign(new Error(''), { code: 'EPIPE' }), 'EPIPE'],
    ['a multi-line message becomes one line', new Error('first\n  second\nthird'), 'first second third'],
    ['a thrown string', 'plain text', 'plain text'],
    [
      'a URL password is hidden',
      new Error('cannot reach postgres://app:s3cr%40t@db:5432/app'),
      'cannot reach postgres://app:***@db:5432/app',
    ],
    ['nothing to say', new Error(''), 'Error'],
  ])('%s', (_what, err, line) => {
    expect(describeFailure(err)).toBe(line);
  });

  it('the verbose detail carries the stack, credentials hidden', () => {
    const detail = failureDetail(new Error('at http://u:pw@h/x'));
    expect(detail).toContain('    at ');
    expect(detail).not.toContain('pw@');
  });
});

describe('hideUrlCredentials', () => {
  it.each([
    ['http://user:pass@host:8123', 'http://user:***@host:8123'],
    ['postgres://:only-password@h/db and redis://r:x@h2', 'postgres://:***@h/db and redis://r:***@h2'],
    ['http://host:8123/path', 'http://host:8123/path'],
    ['user@example.com', 'user@example.com'],
  ])('%s', (text, shown) => {
    expect(hideUrlCredentials(text)).toBe(shown);
  });
});

describe('takeVerbose', () => {
  it.each([
    [['create-project', '--name', 'a'], false, ['create-project', '--name', 'a']],
    [['--verbose', 'create-project', '--name', 'a'], true, ['create-project', '--name', 'a']],
    [['migrate', 'status', '--verbose'], true, ['migrate', 'status']],
    [['x', '--', '--verbose'], false, ['x', '--', '--verbose']],
  ])('%j', (args, verbose, rest) => {
    expect(takeVerbose(args)).toEqual({ verbose, rest });
  });
});
