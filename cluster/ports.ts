// Free TCP ports on a local address, for components that must be told their port up front.
import { createConnection, createServer } from 'node:net';

/**
 * A port on host that was free a moment ago: the kernel picks it for a listener on port 0, which
 * is closed again. Another process can still take it before the caller binds, so callers that can
 * retry on "address in use" do.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`listener on ${host}:0 reported no TCP address`));
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
