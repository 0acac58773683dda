/**
 * The CLI looks its roles up by own name only: a name every object inherits (`constructor`,
 * `toString`, `__proto__`) is an unknown command, exit 2 with one line naming it, as the contract
 * wants of a usage error, not a crash (exit 1 and a stack trace).
 */
import { expect, it } from 'vitest';
import { cli } from '../fixtures/service.ts';

it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
  '`observatory %s` is an unknown command (exit 2)',
  async (name) => {
    const r = await cli([name], {});
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(`observatory: unknown command "${name}"`);
  },
);
