/**
 * Match patterns and usage-key patterns as user input, compiled once. They are evaluated with RE2
 * (re2js, the pure-JavaScript port of Google's RE2): its automaton runs in time linear in the
 * input whatever the pattern, so no pattern can backtrack catastrophically, and none has to be
 * refused on a heuristic guess (a star-height check also refuses the reference's own
 * `(-\d{4})?`). Refused: patterns RE2 cannot compile (invalid, or back-references and lookaround,
 * which RE2 leaves out precisely because they need backtracking) and overlong ones.
 *
 * The reference stores PostgreSQL regexes and makes them case-insensitive with the embedded
 * option `(?i)` (its built-in patterns all start with it); RE2 reads the same option.
 */
import { RE2JS } from 're2js';

export const MAX_PATTERN_LENGTH = 500;

export class PatternError extends Error {
  override name = 'PatternError';
}

/** A compiled pattern: `test` finds it anywhere in the text, as PostgreSQL's `~` does. */
export interface Pattern {
  test(text: string): boolean;
}

/** Compiles a pattern or throws a PatternError saying why it is refused. */
export function compilePattern(pattern: string, caseInsensitive = false): Pattern {
  if (pattern.length === 0) throw new PatternError('is empty');
  if (pattern.length > MAX_PATTERN_LENGTH)
    throw new PatternError(`is longer than ${MAX_PATTERN_LENGTH} characters`);
  try {
    return RE2JS.compile(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    throw new PatternError(`is not a valid RE2 regular expression (${(err as Error).message})`);
  }
}

/** Patterns compiled so far, by text: more than this many and the memory starts over. */
const MAX_REMEMBERED = 10_000;
const remembered = new Map<string, Pattern>();

/**
 * `compilePattern`, remembered per process: every project shares the built-in definitions'
 * patterns (and tiers their usage-key patterns), and compiling them all (about 100 ms) on the event
 * loop at each reload of a project's pricing would hold ingestion.
 */
export function rememberedPattern(pattern: string, caseInsensitive = false): Pattern {
  const key = `${caseInsensitive ? 'i' : 's'}${pattern}`;
  let re = remembered.get(key);
  if (!re) {
    re = compilePattern(pattern, caseInsensitive);
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.set(key, re);
  }
  return re;
}

/** The reason a pattern is refused, or null when it is accepted. */
export function patternProblem(pattern: string): string | null {
  try {
    compilePattern(pattern);
    return null;
  } catch (err) {
    if (err instanceof PatternError) return err.message;
    throw err;
  }
}
