/**
 * What a new password must be (NIST SP 800-63B, 3.1.1.2): long enough, not absurdly long, and not
 * guessable — no composition rules, but a check against lists of commonly used and breached
 * passwords, dictionary words, repeats, sequences and keyboard patterns. The check is zxcvbn's
 * (@zxcvbn-ts/core) with the common-password and diceware lists of @zxcvbn-ts/language-common;
 * the account's email is passed as context, so a password made of it is refused too.
 */
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { adjacencyGraphs, dictionary } from '@zxcvbn-ts/language-common';

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1024;
/** zxcvbn's score 3 ("safely unguessable: moderate protection from offline slow-hash"): at least 10^8 guesses. */
const MIN_SCORE = 3;

let checker: ZxcvbnFactory | undefined;

/** The problem with `password` as `<field>: ...`, or undefined when it may be used. */
export function passwordProblem(
  password: string,
  field = 'password',
  context: string[] = [],
): string | undefined {
  if (password.length < PASSWORD_MIN_LENGTH) return `${field}: at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `${field}: at most ${PASSWORD_MAX_LENGTH} characters`;
  checker ??= new ZxcvbnFactory({ dictionary, graphs: adjacencyGraphs });
  if (checker.check(password, context).score >= MIN_SCORE) return undefined;
  return `${field}: too easy to guess (a common password, a word, a repeat or a pattern)`;
}
