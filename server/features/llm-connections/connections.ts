/**
 * LLM connections: the public API's request and response shapes (the reference's
 * `llm-connections` definition) and the rules on them. Pure: no I/O.
 */
import { z } from 'zod';
import { ADAPTERS } from './adapters.ts';

/** The reference's adapters; this service can call `openai` and `anthropic`. */
export const REFERENCE_ADAPTERS = [
  'anthropic',
  'openai',
  'azure',
  'bedrock',
  'google-vertex-ai',
  'google-ai-studio',
] as const;

export const upsertConnectionRequest = z.object({
  provider: z.string().trim().min(1).max(200),
  adapter: z.enum(REFERENCE_ADAPTERS),
  secretKey: z.string().min(1),
  baseURL: z.string().min(1).nullish(),
  customModels: z.array(z.string().min(1)).nullish(),
  withDefaultModels: z.boolean().nullish(),
  extraHeaders: z.record(z.string().min(1), z.string()).nullish(),
  config: z.record(z.string(), z.unknown()).nullish(),
});
export type UpsertConnectionRequest = z.infer<typeof upsertConnectionRequest>;

/** Why the request cannot be stored (beyond its shape), or undefined. */
export function upsertProblem(req: UpsertConnectionRequest): string | undefined {
  if (!(ADAPTERS as readonly string[]).includes(req.adapter))
    return `adapter: ${req.adapter} is not supported by this service (supported: ${ADAPTERS.join(', ')})`;
  if (req.config != null) {
    const keys = Object.keys(req.config);
    if (req.adapter !== 'openai' || keys.some((k) => k !== 'useResponsesApi'))
      return 'config: only {"useResponsesApi": boolean} for the openai adapter is supported';
    if (req.config['useResponsesApi'] === true)
      return 'config.useResponsesApi: the Responses API is not supported';
  }
  return undefined;
}

export interface LlmConnection {
  id: string;
  projectId: string;
  provider: string;
  adapter: (typeof ADAPTERS)[number];
  displaySecretKey: string;
  baseURL: string | null;
  customModels: string[];
  withDefaultModels: boolean;
  extraHeaderKeys: string[];
  config: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
}

/** The response shape: secrets and header values never leave the server. */
export function publicConnection(c: LlmConnection) {
  return {
    id: c.id,
    provider: c.provider,
    adapter: c.adapter,
    displaySecretKey: c.displaySecretKey,
    baseURL: c.baseURL ?? undefined,
    customModels: c.customModels,
    withDefaultModels: c.withDefaultModels,
    extraHeaderKeys: c.extraHeaderKeys,
    config: c.config ?? undefined,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}
