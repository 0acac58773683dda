/** The start check of a process that reads connections: stored secrets need the key that sealed them. */
import type pg from 'pg';
import type { LlmSettings } from '../config/env.ts';
import { ENV } from '../contract/env.ts';
import { anyConnectionExists } from './connection-store.ts';

/** Why the process must not start, or undefined. */
export async function encryptionKeyProblem(pool: pg.Pool, llm: LlmSettings): Promise<string | undefined> {
  if (llm.encryptionKey) return undefined;
  if (!(await anyConnectionExists(pool))) return undefined;
  return `${ENV.encryptionKey} is required: LLM connections are stored (64 hex characters, the key they were stored with)`;
}
