/**
 * The propagation lease when its holder dies, on real Redis, PostgreSQL and the analytics server.
 * The lease's rules are checked on Redis and on the in-process store alike; then with real worker
 * processes (`observatory worker`, identity from POD_NAME as the operator renders it): a worker
 * restarted under the dead holder's identity takes the lease at once, however long the dead one's
 * still had to run; a worker of another identity never takes it while the holder lives and renews
 * it, and takes it within the lease's lifetime once the holder is killed.
 */

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEASE_MS } from '../../server/app/worker/propagation/job.ts';
import { PROPAGATION_KEYS } from '../../server/features/events/propagation-record.ts';
import {
  type Coordination,
  memoryCoordination,
  redisCoordination,
} from '../../server/platform/coordination/store.ts';
import { cli, DUAL_ENV, startWorker, type WebServer } from '../fixtures/service.ts';
import { type Given, type Stores, startStores, stopStores } from '../fixtures/service-suite.ts';
import { waitFor } from '../fixtures/wait.ts';

const WORKER_ENV = {
  ...DUAL_ENV,
  SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '1',
  SERVICE_EVENT_PROPAGATION_GRACE_SECONDS: '0',
  SERVICE_BACKGROUND_MIGRATIONS_IN_WORKER: 'false',
  SERVICE_BACKGROUND_MIGRATION_V4_ENABLE_HISTORIC_BACKFILL: 'false',
};
/** Far longer than any wait below: a takeover before it ends did not wait the lease out. */
const LONG_LEASE_MS = 600_000;
const STARTUP_MS = 60_000;

let datastores: Stores & Given<{ redis: true }>;
let redis: Redis;
const workers: WebServer[] = [];

beforeAll(async () => {
  datastores = await startStores({ redis: true });
  const migrated = await cli(['migrate', 'up'], { ...datastores.env, ...DUAL_ENV });
  expect(migrated.code, migrated.stderr).toBe(0);
  redis = new Redis(datastores.redis.url);
}, 180_000);

afterAll(async () => {
  redis?.disconnect();
  await Promise.all(workers.map((w) => w.process.kill('SIGKILL')));
  await stopStores(datastores);
});

const holderValue = () => redis.get(PROPAGATION_KEYS.lease);
const identityOf = (value: string | null) => (value === null ? null : (value.split('/')[0] ?? ''));

async function worker(podName: string): Promise<WebServer> {
  const w = await startWorker({ ...datastores.env, ...WORKER_ENV, POD_NAME: podName });
  workers.push(w);
  return w;
}

const kill = (w: WebServer) => w.process.kill('SIGKILL');

const heldBy = (podName: string, timeoutMs: number, other?: string | null) =>
  waitFor(
    `the propagation lease held by ${podName}`,
    async () => {
      const v = await holderValue();
      return identityOf(v) === podName && v !== other ? v! : undefined;
    },
    timeoutMs,
  );

describe('the lease rules', () => {
  const stores: [string, () => Coordination][] = [
    ['redis', () => redisCoordination(datastores.redis.url)],
    ['in-process', memoryCoordination],
  ];
  for (const [name, open] of stores)
    it(`${name}: takes a free lease, keeps another identity out, lets a restart of the holder's identity in`, async () => {
      const c = open();
      const key = `test:lease-rules:${name}`;
      const a = { identity: 'worker-a', process: 'a1' };
      const aRestarted = { identity: 'worker-a', process: 'a2' };
      const b = { identity: 'worker-b', process: 'b1' };
      const anonymous = { process: 'x1' };
      const anonymousToo = { process: 'x2' };
      try {
        expect(await c.acquireLease(key, a, 60_000)).toBe(true);
        expect(await c.acquireLease(key, a, 60_000)).toBe(true);
        expect(await c.acquireLease(key, b, 60_000)).toBe(false);
        expect(await c.acquireLease(key, anonymous, 60_000)).toBe(false);
        expect(await c.renewLease(key, b, 60_000)).toBe(false);
        await c.releaseLease(key, b);
        expect(await c.renewLease(key, a, 60_000)).toBe(true);
        // The holder's identity with another process: the holder died, its successor runs.
        expect(await c.acquireLease(key, aRestarted, 60_000)).toBe(true);
        expect(await c.renewLease(key, a, 60_000)).toBe(false);
        expect(await c.acquireLease(key, a, 60_000)).toBe(true);
        await c.releaseLease(key, a);
        // Without an identity nothing is taken early; an expired lease is free.
        expect(await c.acquireLease(key, anonymous, 300)).toBe(true);
        expect(await c.acquireLease(key, anonymousToo, 60_000)).toBe(false);
        expect(await c.acquireLease(key, { identity: '', process: 'x3' }, 60_000)).toBe(false);
        await new Promise((r) => setTimeout(r, 400));
        expect(await c.renewLease(key, anonymous, 60_000)).toBe(false);
        expect(await c.acquireLease(key, b, 60_000)).toBe(true);
        await c.releaseLease(key, b);
      } finally {
        await c.close();
      }
    });
});

describe('a dead holder of the propagation lease', () => {
  it('is replaced at once by a worker restarted under its identity', async () => {
    const first = await worker('worker-0');
    const dead = await heldBy('worker-0', STARTUP_MS);
    await kill(first);
    // As if the dead holder had just renewed a lease of ten minutes: only its identity can cut it short.
    await redis.pexpire(PROPAGATION_KEYS.lease, LONG_LEASE_MS);
    const killedAt = Date.now();
    await worker('worker-0');
    await heldBy('worker-0', STARTUP_MS, dead);
    expect(Date.now() - killedAt).toBeLessThan(LONG_LEASE_MS / 2);
    expect(await redis.pttl(PROPAGATION_KEYS.lease)).toBeLessThanOrEqual(LEASE_MS);
    // The restarted worker propagates: its runs start.
    const started = Number(await redis.get(PROPAGATION_KEYS.lastRunStartedAt));
    await waitFor(
      'a propagation run of the restarted worker',
      async () => (Number(await redis.get(PROPAGATION_KEYS.lastRunStartedAt)) > started ? true : undefined),
      30_000,
    );
    await Promise.all(workers.splice(0).map(kill));
    await redis.del(PROPAGATION_KEYS.lease);
  }, 240_000);

  it('is waited for by another identity while the holder lives, and replaced within the lease once it is killed', async () => {
    const holder = await worker('worker-a');
    await heldBy('worker-a', STARTUP_MS);
    await worker('worker-b');
    // The standby asks every few seconds; the holder's heartbeat keeps the lease past its lifetime.
    const watchUntil = Date.now() + LEASE_MS + 5_000;
    const seen = new Set<string | null>();
    while (Date.now() < watchUntil) {
      seen.add(identityOf(await holderValue()));
      await new Promise((r) => setTimeout(r, 100));
    }
    expect([...seen]).toEqual(['worker-a']);
    await kill(holder);
    const killedAt = Date.now();
    await heldBy('worker-b', LEASE_MS + 30_000);
    // Within the lease's lifetime and one standby's ask after it, not a run interval's multiple.
    expect(Date.now() - killedAt).toBeLessThan(LEASE_MS + LEASE_MS / 3 + 5_000);
  }, 240_000);
});
