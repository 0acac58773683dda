/**
 * The start check of a process that reads stored secrets (LLM connections, alert channels,
 * integration credentials): they need the key that sealed them.
 */
import type pg from 'pg';
import { LLM_ENV } from '../../contract/env.ts';
import { anyChannelExists } from '../../features/alerts/store.ts';
import { anySealedIntegrationSecret } from '../../features/integrations/store.ts';
import { anyConnectionExists } from '../../features/llm-connections/connection-store.ts';
import type { LlmSettings } from '../../kernel/config/env.ts';

/** Why the process must not start, or undefined. */
export async function encryptionKeyProblem(pool: pg.Pool, llm: LlmSettings): Promise<string | undefined> {
  if (llm.encryptionKey) return undefined;
  const what = (await anyConnectionExists(pool))
    ? 'LLM connections'
    : (await anyChannelExists(pool))
      ? 'alert channels'
      : (await anySealedIntegrationSecret(pool))
        ? 'integration credentials'
        : undefined;
  if (!what) return undefined;
  return `${LLM_ENV.encryptionKey} is required: ${what} are stored (64 hex characters, the key they were stored with)`;
}
