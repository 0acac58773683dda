/**
 * A password in front of a PostgreSQL server that checks none (PGlite behind pglite-socket trusts
 * every client): a loopback listener that speaks the start of PostgreSQL's wire protocol itself.
 * It declines SSL ('N'), keeps the StartupMessage, asks for the password
 * (AuthenticationCleartextPassword, as PostgreSQL's `password` method; the bytes never leave
 * loopback), compares it in constant time and, when right, connects to the upstream, replays the
 * StartupMessage and pipes both ways; a wrong one gets PostgreSQL's own FATAL 28P01 and the
 * connection closes. The upstream listens on a socket path in a directory only this user can open.
 */
import { timingSafeEqual } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';

const SSL_REQUEST = 80_877_103;
const GSSENC_REQUEST = 80_877_104;
const PROTOCOL_3 = 196_608;
/** Bounds on what a client may send before it is authenticated. */
const MAX_STARTUP_BYTES = 10_000;
const MAX_PASSWORD_BYTES = 4_096;
const HANDSHAKE_TIMEOUT_MS = 10_000;

const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const message = (type: string, body: Buffer) =>
  Buffer.concat([Buffer.from(type), int32(body.length + 4), body]);
const fatal = (code: string, text: string) =>
  message(
    'E',
    Buffer.concat([
      ...['SFATAL', 'VFATAL', `C${code}`, `M${text}`].map((f) => Buffer.from(`${f}\0`)),
      Buffer.from([0]),
    ]),
  );

/** The `user` parameter of a StartupMessage (for the error text PostgreSQL would send). */
function userOf(startup: Buffer): string {
  const parts = startup.subarray(8).toString('utf8').split('\0');
  const i = parts.indexOf('user');
  return i >= 0 ? (parts[i + 1] ?? '') : '';
}

function sameSecret(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Handles one client connection until it is authenticated and piped, or refused. */
function gate(client: Socket, expected: Buffer, upstreamPath: string): void {
  let buffer = Buffer.alloc(0);
  let startup: Buffer | undefined;
  const refuse = (code: string, text: string) => {
    client.end(fatal(code, text));
    client.removeListener('data', onData);
  };
  const timer = setTimeout(() => refuse('08P01', 'authentication timed out'), HANDSHAKE_TIMEOUT_MS);
  const onData = (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    while (startup === undefined && buffer.length >= 8) {
      const length = buffer.readInt32BE(0);
      const code = buffer.readInt32BE(4);
      if (length < 8 || length > MAX_STARTUP_BYTES) return refuse('08P01', 'invalid startup packet length');
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
        client.write('N');
        buffer = buffer.subarray(8);
        continue;
      }
      if (code !== PROTOCOL_3) return refuse('0A000', 'unsupported frontend protocol or request');
      if (buffer.length < length) return;
      startup = buffer.subarray(0, length);
      buffer = buffer.subarray(length);
      client.write(message('R', int32(3)));
    }
    if (startup === undefined || buffer.length < 5) return;
    const length = buffer.readInt32BE(1);
    if (buffer[0] !== 0x70 || length < 5 || length > MAX_PASSWORD_BYTES) {
      return refuse('08P01', 'expected a password message');
    }
    if (buffer.length < length + 1) return;
    const given = buffer.subarray(5, length); // without the terminating NUL
    const rest = buffer.subarray(length + 1);
    client.removeListener('data', onData);
    clearTimeout(timer);
    if (!sameSecret(given, expected)) {
      client.end(fatal('28P01', `password authentication failed for user "${userOf(startup)}"`));
      return;
    }
    const upstream = connect(upstreamPath);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.write(startup);
    if (rest.length > 0) upstream.write(rest);
    client.pipe(upstream);
    upstream.pipe(client);
  };
  client.on('data', onData);
  client.on('error', () => clearTimeout(timer));
  client.on('close', () => clearTimeout(timer));
}

export interface PasswordGate {
  port: number;
  close(): Promise<void>;
}

/** Listens on `host`:`port` (0: a free one) and admits clients with `password` to `upstreamPath`. */
export async function startPasswordGate(o: {
  host: string;
  port: number;
  password: string;
  upstreamPath: string;
}): Promise<PasswordGate> {
  const expected = Buffer.from(o.password, 'utf8');
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    gate(client, expected, o.upstreamPath);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : o.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
