/**
 * A Job's termination message read as the contract's summary it promises (server/contract/): the
 * one place a summary's JSON and schema are checked, so every Job's result reads alike.
 */
import type { z } from 'zod';

export type Summary<T> = { ok: true; summary: T } | { ok: false; why: string };

export function readSummary<S extends z.ZodType>(
  schema: S,
  message: string | undefined,
): Summary<z.infer<S>> {
  if (!message) return { ok: false, why: 'the Job left no summary in its termination message' };
  let json: unknown;
  try {
    json = JSON.parse(message);
  } catch {
    return { ok: false, why: 'the termination message is not JSON' };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      why: `the summary does not follow the contract: ${parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
        .join('; ')}`,
    };
  return { ok: true, summary: parsed.data };
}
