// Free TCP ports on a local address, for components that must be told their port up front.
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';

// Drawn between the node's fixed ports (10248-10259) and Kubernetes NodePorts (30000 up).
const LOWEST_PORT = 20_000;
const NODE_PORTS_START = 30_000;
const PICKS = 64;

/**
 * A port on host that was free a moment ago. It is drawn below the kernel's ephemeral range:
 * inside it, any outgoing connection of any process can take the port as its local end between
 * our probe and the caller's bind (a CI run lost a suite to exactly that). Outside it, only another
 * explicit bind can, so callers that can retry on "address in use" still do.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const end = Math.min(NODE_PORTS_START, ephemeralRangeStart());
  for (let pick = 0; pick < PICKS && end > LOWEST_PORT; pick++) {
    const port = randomInt(LOWEST_PORT, end);
    if (await canBind(host, port)) return port;
  }
  return bindPort(host, 0);
}

function ephemeralRangeStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low)) return low;
  } catch {
    // Not Linux: assume the IANA dynamic range.
  }
  return 49_152;
}

function canBind(host: string, port: number): Promise<boolean> {
  return bindPort(host, port).then(
    () => true,
    () => false,
  );
}

/** Binds host:port exclusively (0: the kernel picks), closes it again, and resolves the port. */
function bindPort(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`listener on ${host}:${port} reported no TCP address`));
        return;
      }
      server.close((err) => (err ? reject(err) : resolve(address.port)));
    });
  });
}

/** Whether something accepts TCP connections on host:port right now. */
export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
