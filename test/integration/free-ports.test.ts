import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, isListening } from '../fixtures/ports.ts';
import { ProcessStartError, startOnFreePort, startProcess, waitUntilReady } from '../fixtures/processes.ts';

const ephemeralStart = Number(
  readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
);

const held: Server[] = [];
afterEach(async () => {
  await Promise.all(held.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function hold(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    held.push(server);
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => resolve());
  });
}

/** A real child that listens on `port` as our servers do, and exits with Node's EADDRINUSE when it cannot. */
async function startListener(port: number) {
  const child = startProcess('listener', process.execPath, [
    '-e',
    `require('node:net').createServer().listen(${port}, '127.0.0.1', () => console.log('listening'))`,
  ]);
  // Ready when the child says so: a probe of the port would also see whoever holds it.
  await waitUntilReady(child, async () => child.output().includes('listening'), {
    timeoutMs: 10_000,
    intervalMs: 20,
  });
  return child;
}

describe('free ports for the servers the tests start', () => {
  it('are drawn below the ephemeral range, where no outgoing connection takes them, and bind', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(Math.min(30_000, ephemeralStart));
    }
    await hold(ports[0] as number);
    expect(await isListening(ports[0] as number)).toBe(true);
  });

  it('start on another port when theirs was taken between the probe and the bind', async () => {
    const tried: number[] = [];
    const child = await startOnFreePort('127.0.0.1', async (port) => {
      tried.push(port);
      // Someone else binds the first port right after our probe.
      if (tried.length === 1) await hold(port);
      return startListener(port);
    });
    try {
      expect(tried).toHaveLength(2);
      expect(tried[1]).not.toBe(tried[0]);
      expect(await isListening(tried[1] as number)).toBe(true);
    } finally {
      await child.kill();
    }
  });

  it('give up after three taken ports, and never retry another failure', async () => {
    let calls = 0;
    const taken = startOnFreePort('127.0.0.1', async (port) => {
      calls++;
      await hold(port);
      return startListener(port);
    });
    await expect(taken).rejects.toThrow(/address already in use/);
    expect(calls).toBe(3);

    calls = 0;
    const broken = startOnFreePort('127.0.0.1', async () => {
      calls++;
      throw new ProcessStartError('server exited', 'config file missing', undefined);
    });
    await expect(broken).rejects.toThrow(/config file missing/);
    expect(calls).toBe(1);
  });
});
