// Addresses for one cluster. Each cluster gets its own 127.<block>.0.0/16 slice of the loopback
// range: the control plane listens on 127.<block>.0.1 and Pods get 127.<block>.x.y, so clusters
// running side by side never compete for an address and port, even when Pods use fixed ports.
import { createServer } from 'node:net';

const blocksInUse = new Set<number>();

/** A /16 block of 127/8 not used by this process and whose .0.1 is free right now. */
export async function reserveLoopbackBlock(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // 127.0/16 and 127.1/16 are left to everything else on the machine.
    const block = 10 + Math.floor(Math.random() * 240);
    if (blocksInUse.has(block)) continue;
    if (!(await canBind(`127.${block}.0.1`, 0))) continue;
    blocksInUse.add(block);
    return block;
  }
  throw new Error('no free loopback block found');
}

export function releaseLoopbackBlock(block: number): void {
  blocksInUse.delete(block);
}

function canBind(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Ports the kernel reports free on host (distinct from each other). */
export async function freePorts(host: string, count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen({ host, port: 0, exclusive: true }, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    if (!address || typeof address === 'string') throw new Error('unexpected listen address');
    return address.port;
  });
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** Whether nothing listens on host:port any more. */
export async function portIsFree(host: string, port: number): Promise<boolean> {
  return canBind(host, port);
}

/** Hands out Pod addresses 127.<block>.x.y (x >= 1), never giving one out twice while in use. */
export class PodAddressPool {
  private next = 0;
  private readonly used = new Set<string>();
  private readonly block: number;
  constructor(block: number) {
    this.block = block;
  }

  allocate(): string {
    const size = 254 * 254;
    for (let i = 0; i < size; i++) {
      const n = this.next;
      this.next = (this.next + 1) % size;
      const ip = `127.${this.block}.${1 + Math.floor(n / 254)}.${1 + (n % 254)}`;
      if (!this.used.has(ip)) {
        this.used.add(ip);
        return ip;
      }
    }
    throw new Error('pod address pool exhausted');
  }

  release(ip: string): void {
    this.used.delete(ip);
  }
}
