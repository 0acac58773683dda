/**
 * The web's OTLP/gRPC listener: the collector's services (services.ts) on a port of their own, one
 * handler per signal. Each call is authenticated as the HTTP API is (auth.ts: the `authorization`
 * metadata carries the project's key pair), shed under the same bounds as the HTTP writes (the
 * concurrent-write limit, the ingestion log's backlog), and answered with the handler's encoded
 * Export*ServiceResponse (its partial success) or a gRPC status (status.ts).
 */
import { readFileSync } from 'node:fs';
import {
  type handleUnaryCall,
  type Metadata,
  Server,
  ServerCredentials,
  type ServerErrorResponse,
  status,
} from '@grpc/grpc-js';
import { DEFAULT_MAX_DECODED_BYTES } from '../../../features/otel/decode.ts';
import type { Principal } from '../../../features/projects/keys.ts';
import type { OtlpGrpcSettings } from '../../../kernel/config/env.ts';
import { HttpError, isStoreUnavailable } from '../../../kernel/errors.ts';
import type { WebContext } from '../core/context.ts';
import { authenticate } from './auth.ts';
import { exportServiceDefinition, type OtlpSignal } from './services.ts';
import { grpcStatusOf } from './status.ts';

/** One export, authenticated: its (decompressed) protobuf bytes, its project and its metadata. */
export interface OtlpGrpcCall {
  body: Buffer;
  principal: Principal;
  /** A metadata entry's first value (lower-case name), e.g. a producer's `x-service-sdk-name`. */
  header: (name: string) => string | undefined;
}

/**
 * Handles one export: resolves to the encoded Export*ServiceResponse, or throws an HttpError (its
 * status becomes the call's gRPC status, its message the details).
 */
export type OtlpExportHandler = (call: OtlpGrpcCall) => Promise<Buffer>;

/** The handler of each signal; a signal without one answers UNIMPLEMENTED, naming the signal. */
export type OtlpHandlers = Partial<Record<OtlpSignal, OtlpExportHandler>>;

export interface OtlpGrpcServer {
  port: number;
  close: () => Promise<void>;
}

const failure = (code: status, details: string): Partial<ServerErrorResponse> => ({ code, details });

function failureOf(err: unknown): Partial<ServerErrorResponse> {
  if (err instanceof HttpError) return failure(grpcStatusOf(err.statusCode), err.message);
  if (isStoreUnavailable(err)) return failure(status.UNAVAILABLE, 'a datastore is unavailable; retry');
  return failure(status.INTERNAL, 'internal error');
}

const firstValue = (metadata: Metadata) => (name: string) => {
  const v = metadata.get(name)[0];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

function unary(
  ctx: WebContext,
  signal: OtlpSignal,
  handler: OtlpExportHandler | undefined,
  admit: () => (() => void) | Error,
): handleUnaryCall<Buffer, Buffer> {
  return (call, callback) => {
    if (!handler) {
      callback(failure(status.UNIMPLEMENTED, `OTLP ${signal} are not served over gRPC by this server`));
      return;
    }
    const done = admit();
    if (done instanceof Error) {
      callback(failureOf(done));
      return;
    }
    const header = firstValue(call.metadata);
    authenticate(ctx, header('authorization'))
      .then(async (principal) => {
        const refusal = await ctx.ingestionBacklog?.refusal();
        if (refusal) throw new HttpError(429, refusal.message);
        return handler({ body: call.request, principal, header });
      })
      .then(
        (answer) => callback(null, answer),
        (err: unknown) => callback(failureOf(err)),
      )
      .finally(done);
  };
}

/** Listens on `host:settings.port` (0: a free port) with the handlers given; TLS when configured. */
export async function startOtlpGrpc(
  ctx: WebContext,
  handlers: OtlpHandlers,
  opts: { host: string; port: number; tls: OtlpGrpcSettings['tls']; maxInFlight: number },
): Promise<OtlpGrpcServer> {
  const server = new Server({
    // The HTTP endpoints' bound on a decoded export; grpc-js checks it after decompression.
    'grpc.max_receive_message_length': DEFAULT_MAX_DECODED_BYTES,
  });
  let inFlight = 0;
  const admit = () => {
    if (inFlight >= opts.maxInFlight) return new HttpError(429, 'Too many concurrent writes; retry shortly');
    inFlight++;
    return () => {
      inFlight--;
    };
  };
  for (const signal of ['traces', 'metrics', 'logs'] as const) {
    server.addService(exportServiceDefinition(signal), {
      Export: unary(ctx, signal, handlers[signal], admit),
    });
  }
  const credentials = opts.tls
    ? ServerCredentials.createSsl(null, [
        { cert_chain: readFileSync(opts.tls.certFile), private_key: readFileSync(opts.tls.keyFile) },
      ])
    : ServerCredentials.createInsecure();
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${opts.port}`, credentials, (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
      }),
  };
}
