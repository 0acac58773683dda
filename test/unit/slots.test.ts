import { describe, expect, it } from 'vitest';
import { Slots } from '../../server/analytics/slots.ts';

/** A job the test ends by hand; records when it started. */
function manualJobs() {
  const started: number[] = [];
  const enders = new Map<number, (err?: Error) => void>();
  const job = (id: number) => () =>
    new Promise<number>((resolve, reject) => {
      started.push(id);
      enders.set(id, (err) => (err ? reject(err) : resolve(id)));
    });
  const end = async (id: number, err?: Error) => {
    enders.get(id)!(err);
    await tick();
  };
  return { started, job, end };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Slots', () => {
  it.each([
    { width: 1, jobs: 3, startedAtOnce: [0] },
    { width: 2, jobs: 3, startedAtOnce: [0, 1] },
    { width: 4, jobs: 3, startedAtOnce: [0, 1, 2] },
  ])('width $width runs $startedAtOnce of $jobs jobs at once', async ({ width, jobs, startedAtOnce }) => {
    const slots = new Slots(width);
    const m = manualJobs();
    const results = Array.from({ length: jobs }, (_, i) => slots.run(m.job(i)));
    await tick();
    expect(m.started).toEqual(startedAtOnce);
    expect(slots.running).toBe(startedAtOnce.length);
    expect(slots.waiting).toBe(jobs - startedAtOnce.length);
    for (let i = 0; i < jobs; i++) await m.end(i);
    expect(await Promise.all(results)).toEqual(Array.from({ length: jobs }, (_, i) => i));
    expect(slots.running).toBe(0);
  });

  it('starts waiting jobs in submission order as slots free up, whichever job ended', async () => {
    const slots = new Slots(2);
    const m = manualJobs();
    for (let i = 0; i < 5; i++) void slots.run(m.job(i)).catch(() => undefined);
    await tick();
    await m.end(1);
    expect(m.started).toEqual([0, 1, 2]);
    await m.end(0, new Error('failed'));
    expect(m.started).toEqual([0, 1, 2, 3]);
    await m.end(3);
    expect(m.started).toEqual([0, 1, 2, 3, 4]);
    expect(slots.running).toBe(2);
  });

  it('frees the slot of a job that throws synchronously and passes the error on', async () => {
    const slots = new Slots(1);
    await expect(
      slots.run(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await slots.run(() => 'next')).toBe('next');
    expect(slots.running).toBe(0);
  });

  it('drain waits for every earlier job, including one that outlasts the others', async () => {
    const slots = new Slots(2);
    const m = manualJobs();
    for (let i = 0; i < 3; i++) void slots.run(m.job(i));
    let drained = false;
    const drain = slots.drain().then(() => (drained = true));
    await tick();
    await m.end(1);
    await m.end(2);
    expect(drained).toBe(false);
    await m.end(0);
    await drain;
    expect(drained).toBe(true);
    expect(slots.running).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses width %s', (width) => {
    expect(() => new Slots(width)).toThrow(/width/);
  });
});
