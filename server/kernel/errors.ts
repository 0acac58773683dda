/**
 * The errors a request can end with. Code anywhere below the web layer throws an `HttpError` kind
 * to answer a status; the web's error handler (app/web/core/error-handler.ts) turns it into `{message, error?}`.
 * `isStoreUnavailable` tells a datastore that is down or unreachable (503, retry) from a bug (500).
 * Pure: no I/O.
 */

export class HttpError extends Error {
  override name = 'HttpError';
  readonly statusCode: number;
  /** What is wrong, naming the fields (e.g. `body.name: expected string`); sent as `error`. */
  readonly details: string | undefined;
  constructor(statusCode: number, message: string, details?: string) {
    super(message);
    this.statusCode = statusCode;
    this.details = details;
  }
}

/** An HttpError kind: the status it answers, and its name in logs. */
const kind = (name: string, statusCode: number) =>
  class extends HttpError {
    override name = name;
    constructor(message: string, details?: string) {
      super(statusCode, message, details);
    }
  };

/** A kind answered with Retry-After. */
const retryKind = (name: string, statusCode: number) =>
  class extends HttpError {
    override name = name;
    readonly retryAfterSeconds: number;
    constructor(message: string, retryAfterSeconds: number) {
      super(statusCode, message);
      this.retryAfterSeconds = retryAfterSeconds;
    }
  };

export const BadRequest = kind('BadRequest', 400);

/** One failing field of a request part: zod's issue code, its message, and the path to the field. */
export interface ValidationIssue {
  code: string;
  message: string;
  path: (string | number)[];
}

/** Issues as field paths and messages: `value: NUMERIC scores need a number value; name: Required`. */
export function describeIssueList(
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
): string {
  return issues
    .map((i) => `${i.path.length > 0 ? `${i.path.map(String).join('.')}: ` : ''}${i.message}`)
    .join('; ');
}

/**
 * A request part (path parameters, query string or body) that does not parse: a 400 whose
 * `details` name the fields, and which keeps the part and its issues for the answers that list them.
 */
export class InvalidRequestPart extends HttpError {
  override name = 'InvalidRequestPart';
  readonly part: 'params' | 'query' | 'body';
  readonly issues: ValidationIssue[];
  constructor(part: 'params' | 'query' | 'body', issues: ValidationIssue[]) {
    super(400, 'Invalid request data', describeIssueList(issues));
    this.part = part;
    this.issues = issues;
  }
}
export const Unauthorized = kind('Unauthorized', 401);
export const Forbidden = kind('Forbidden', 403);
export const NotFound = kind('NotFound', 404);
export const Conflict = kind('Conflict', 409);
export const PayloadTooLarge = kind('PayloadTooLarge', 413);
/** A feature this deployment is not configured for (no media bucket, say); the message names the setting. */
export const NotConfigured = kind('NotConfigured', 501);
export const TooManyRequests = retryKind('TooManyRequests', 429);
export const ServiceUnavailable = retryKind('ServiceUnavailable', 503);

/** Socket-level failures of any client (Node system errors). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * PostgreSQL SQLSTATEs of a server that cannot serve now: connection exceptions (class 08),
 * shutdown and startup (57P01-57P03), out of shared memory (53200: the lock table, full until other
 * transactions end), too many connections (53300), a lock wait past its bound
 * (55P03, an entity lock of ingestion) and a deadlock victim (40P01): retrying succeeds.
 */
const PG_UNAVAILABLE = /^(08...|57P0[123]|53200|53300|55P03|40P01)$/;

/** ClickHouse server exceptions that mean "busy or timed out", not "wrong query". */
const CLICKHOUSE_UNAVAILABLE = new Set([
  'TIMEOUT_EXCEEDED',
  'SOCKET_TIMEOUT',
  'NETWORK_ERROR',
  'TOO_MANY_SIMULTANEOUS_QUERIES',
  'ALL_CONNECTION_TRIES_FAILED',
  'TABLE_IS_READ_ONLY',
]);

/** Messages of clients that fail without a code (pg, pg-pool, @clickhouse/client, ioredis). */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/i, // pg: the server closed or the connect timed out
  /timeout exceeded when trying to connect/i, // pg-pool
  /is not queryable/i, // pg: a client whose connection failed
  /^Timeout error\.?$/i, // @clickhouse/client request_timeout
  /^socket hang up$/i,
  /^Connection is closed\.?$/i, // ioredis
  /^Stream isn't writeable/i, // ioredis with the offline queue off
];

/** The ioredis error names for a Redis that cannot be reached. */
const REDIS_UNAVAILABLE_NAMES = new Set(['MaxRetriesPerRequestError']);

/**
 * Whether `err` means a datastore is unreachable, down or timing out, so the request may succeed
 * when retried. Follows `cause` chains and the `errors` of an AggregateError (Node reports a
 * refused connection to every address of a host that way).
 */
export function isStoreUnavailable(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 5) return false;
  if (err instanceof HttpError) return false;
  const e = err as Error & { code?: unknown; type?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || PG_UNAVAILABLE.test(e.code))) return true;
  if (typeof e.type === 'string' && CLICKHOUSE_UNAVAILABLE.has(e.type)) return true;
  if (REDIS_UNAVAILABLE_NAMES.has(e.name)) return true;
  if (UNAVAILABLE_MESSAGES.some((re) => re.test(e.message))) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isStoreUnavailable(inner, depth + 1))) return true;
  return isStoreUnavailable(e.cause, depth + 1);
}
