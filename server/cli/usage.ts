import { type ParseArgsConfig, parseArgs } from 'node:util';

/** Wrong flags or arguments: the CLI prints the message and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** `util.parseArgs` with strict checking whose failures become UsageErrors. */
export function parseFlags<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function intFlag(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a non-negative integer`);
  return n;
}

/** The flags of a command over a window of time, of one project or all: `--from ISO --to ISO [--project ID] [--json]`. */
export const WINDOW_FLAGS = {
  from: { type: 'string' },
  to: { type: 'string' },
  project: { type: 'string' },
  json: { type: 'boolean' },
} as const;
