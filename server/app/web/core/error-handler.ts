/**
 * The one error handler of the web app. An `HttpError` answers its own status; Fastify's 4xx
 * (bad JSON, body too large, unsupported content type) stay 4xx; a datastore that is down answers
 * 503 with Retry-After; anything else is a bug: 500, logged, and nothing of it echoed.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import { envelopeOf } from '../../../features/evaluation/errors.ts';
import { MAX_DRAIN_BYTES, MAX_DRAIN_MS } from '../../../features/write-model/limits.ts';
import {
  HttpError,
  isStoreUnavailable,
  ServiceUnavailable,
  TooManyRequests,
} from '../../../kernel/errors.ts';
import type { PluginOptions } from '../../../platform/http/plugin-options.ts';
import type { WebContext } from './context.ts';

/** invalid_byte_sequence_for_encoding, untranslatable_character. */
const PG_UNSTORABLE_TEXT = new Set(['22021', '22P05']);

/** Seconds a client waits before retrying a request that met a store that is down. */
export const STORE_RETRY_AFTER_SECONDS = 5;

const WRITE_NOT_ACKNOWLEDGED =
  'The service could not store this request; nothing was acknowledged. Retry later.';
const READ_UNAVAILABLE = 'A datastore is unavailable; retry later.';

/** An API family's plugin, registered with the web context. */
type WebFamily = FastifyPluginAsync<PluginOptions<WebContext>>;

const isWrite = (req: FastifyRequest) => req.method !== 'GET' && req.method !== 'HEAD';

/** The Retry-After of an error that says when to come back. */
function retryAfter(reply: FastifyReply, err: HttpError): FastifyReply {
  if (err instanceof ServiceUnavailable || err instanceof TooManyRequests) {
    reply.header('retry-after', String(err.retryAfterSeconds));
  }
  return reply.code(err.statusCode);
}

export function sendHttpError(reply: FastifyReply, err: HttpError): FastifyReply {
  return retryAfter(reply, err).send(
    err.details === undefined ? { message: err.message } : { message: err.message, error: err.details },
  );
}

/**
 * Reads and discards the rest of a request body in the background, so that a client still sending
 * reads the answer instead of a broken pipe; past MAX_DRAIN_BYTES or MAX_DRAIN_MS the connection
 * is closed.
 */
function discardRest(raw: IncomingMessage): void {
  if (raw.complete || raw.destroyed) return;
  const socket = raw.socket as Socket & { destroySoon?: () => void };
  const timer = setTimeout(() => socket.destroy(), MAX_DRAIN_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // Node destroys a `connection: close` socket as soon as the answer is written, cutting off a
  // client still sending; ending only our side lets it finish sending and read the answer.
  socket.destroySoon = () => socket.end();
  let received = 0;
  raw.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > MAX_DRAIN_BYTES) socket.destroy();
  });
  raw.resume();
}

/**
 * Any error of a request as the HttpError it answers: its own, Fastify's 4xx, PostgreSQL's refusal
 * of text it cannot store, a datastore that is down (503), or a bug (500, logged here).
 */
function asHttpError(err: FastifyError, req: FastifyRequest): HttpError {
  if (err instanceof HttpError) return err;
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    discardRest(req.raw);
    return new HttpError(413, `Request body too large: ${err.message}`);
  }
  // Fastify's own client errors (FST_ERR_CTP_*, JSON syntax) carry a 4xx status and a safe message.
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return new HttpError(err.statusCode, err.message);
  }
  // PostgreSQL refuses text it cannot store (U+0000, bad UTF-8) for input the route let through.
  if (PG_UNSTORABLE_TEXT.has((err as { code?: unknown }).code as string)) {
    return new HttpError(400, 'Invalid request data', 'text must not contain a NUL character');
  }
  if (isStoreUnavailable(err)) {
    req.log.warn({ err }, 'datastore unavailable');
    return new ServiceUnavailable(
      isWrite(req) ? WRITE_NOT_ACKNOWLEDGED : READ_UNAVAILABLE,
      STORE_RETRY_AFTER_SECONDS,
    );
  }
  req.log.error({ err }, 'request failed');
  return new HttpError(500, 'internal error');
}

export function handleError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendHttpError(reply, asHttpError(err, req));
}

/**
 * Registers route families in `scope`: `families` as they are, `enveloped` (the unstable API's, and
 * the UI routes that share their errors) in a child scope whose errors answer the unstable API's
 * envelope `{message, code, details?}`.
 */
export function registerFamilies(
  scope: FastifyInstance,
  ctx: WebContext,
  families: readonly WebFamily[],
  enveloped: readonly WebFamily[],
): void {
  for (const family of families) scope.register(family, { ctx });
  scope.register(async (unstable) => {
    unstable.setErrorHandler((err, req, reply) => {
      const http = asHttpError(err as FastifyError, req);
      return retryAfter(reply, http).send(envelopeOf(http, req.body !== undefined && req.body !== null));
    });
    for (const family of enveloped) unstable.register(family, { ctx });
  });
}
