/**
 * The answers every family gives alike: a missing entity is a 404 `<What> <id> not found`, and a
 * domain error of the stores (a name taken, a member conflict) becomes the HTTP error naming it.
 * Under the unstable routes the error handler wraps these in the envelope (`resource_not_found`).
 */
import { type HttpError, NotFound } from '../../kernel/errors.ts';

/** The 404 of an entity the project does not have. */
export const notFound = (what: string, id: string) => new NotFound(`${what} ${id} not found`);

/** `value`, or the 404 of `what` when the lookup, change or delete found none (null, undefined, false). */
export function found<T>(value: T | null | undefined | false, what: string, id: string): T {
  if (!value) throw notFound(what, id);
  return value;
}

/** How one kind of domain error is answered; see `translating`. */
type Answer = (err: unknown) => HttpError | undefined;

export const when =
  <E extends Error>(kind: new (...args: never[]) => E, answer: (err: E) => HttpError): Answer =>
  (err) =>
    err instanceof kind ? answer(err) : undefined;

/** Runs `work`; an error of a kind `answers` name is answered as they say, any other goes on. */
export async function translating<T>(work: () => Promise<T>, ...answers: Answer[]): Promise<T> {
  try {
    return await work();
  } catch (err) {
    for (const answer of answers) {
      const http = answer(err);
      if (http) throw http;
    }
    throw err;
  }
}
