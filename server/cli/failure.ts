/**
 * How the CLI reports a command that failed: one line naming what failed, and the stack only when
 * asked (`--verbose`). Both pass through `hideUrlCredentials`, as a message may quote a datastore
 * URL. Pure.
 */
import { inspect } from 'node:util';

/** `scheme://user:password@host` with the password replaced, wherever it appears in `text`. */
export const hideUrlCredentials = (text: string): string =>
  text.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/?#\s@]*:)[^@\s/]+@/gi, '$1***@');

/** PostgreSQL's errors (pg's DatabaseError) carry a severity; their text does not name the database. */
const isPostgresError = (err: Error): boolean => typeof (err as { severity?: unknown }).severity === 'string';

function messageOf(err: unknown): string {
  // Node's connect with several addresses (localhost: ::1 and 127.0.0.1) fails with an empty
  // AggregateError whose parts say what was refused.
  if (err instanceof AggregateError && err.message === '' && err.errors.length > 0) {
    return [...new Set(err.errors.map(messageOf))].join('; ');
  }
  if (err instanceof Error) {
    const text = err.message || (err as { code?: string }).code || err.name;
    return isPostgresError(err) ? `PostgreSQL: ${text}` : text;
  }
  return String(err);
}

/** One line saying what failed. */
export function describeFailure(err: unknown): string {
  const line = messageOf(err)
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  return hideUrlCredentials(line || 'failed without a message');
}

/** Everything known about the failure (stack, causes, parts), for `--verbose`. */
export const failureDetail = (err: unknown): string => hideUrlCredentials(inspect(err, { depth: 4 }));
