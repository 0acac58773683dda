/** The answers every web family shares (`server/platform/http/answers.ts`), by tables. */
import { describe, expect, it } from 'vitest';
import { Conflict, NotFound } from '../../server/kernel/errors.ts';
import { found, notFound, translating, when } from '../../server/platform/http/answers.ts';

class NameTaken extends Error {}
class Elsewhere extends Error {}

describe('a missing entity', () => {
  it.each([null, undefined, false])('%s is the 404 naming what and which', (value) => {
    expect(() => found(value, 'Dashboard', 'd1')).toThrow(NotFound);
    expect(() => found(value, 'Dashboard', 'd1')).toThrow('Dashboard d1 not found');
  });

  it.each([{ id: 'd1' }, 1, 'x', true])('%j is returned as found', (value) => {
    expect(found(value, 'Dashboard', 'd1')).toBe(value);
  });

  it('notFound names what and which', () => {
    expect(notFound('Queue', 'q9').message).toBe('Queue q9 not found');
  });
});

describe('domain errors answered', () => {
  const answers = [when(NameTaken, (e) => new Conflict(`name taken: ${e.message}`))];
  it.each([
    ['a kind named: its answer', new NameTaken('qa'), Conflict, 'name taken: qa'],
    ['a kind not named: goes on as it was', new Elsewhere('boom'), Elsewhere, 'boom'],
  ] as const)('%s', async (_, thrown, kind, message) => {
    const work = () => Promise.reject(thrown);
    await expect(translating(work, ...answers)).rejects.toBeInstanceOf(kind);
    await expect(translating(work, ...answers)).rejects.toThrow(message);
  });

  it('work that succeeds is its value', async () => {
    expect(await translating(async () => 42, ...answers)).toBe(42);
  });
});
