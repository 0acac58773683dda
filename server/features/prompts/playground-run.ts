/**
 * One playground run: the prompt's references resolved against the project's prompts, its
 * variables filled, sent through the project's LLM connection (the adapters and the address guard
 * the evaluator uses), and the answer's usage priced by the project's model definitions.
 */
import type pg from 'pg';
import { LLM_ENV } from '../../contract/env.ts';
import type { LlmSettings } from '../../kernel/config/env.ts';
import { BadRequest, HttpError, NotConfigured } from '../../kernel/errors.ts';
import { buildCompletionCall, readCompletion } from '../llm-connections/adapters.ts';
import { findUsableConnection } from '../llm-connections/connection-store.ts';
import { AddressRefused, postJson } from '../llm-connections/guarded-http.ts';
import { priceGeneration } from '../models/apply.ts';
import type { ModelCatalog } from '../models/catalog.ts';
import { messagesOf, type PlaygroundRequest } from './playground.ts';
import { resolveUnsaved } from './store.ts';

/** A playground call waits this long for the provider (a person is watching the page). */
const PLAYGROUND_TIMEOUT_MS = 120_000;

export interface PlaygroundDeps {
  pool: pg.Pool;
  llm: LlmSettings;
  models: ModelCatalog;
}

export async function runPlayground(deps: PlaygroundDeps, projectId: string, req: PlaygroundRequest) {
  if (!deps.llm.encryptionKey)
    throw new NotConfigured(`LLM connections need ${LLM_ENV.encryptionKey} on the server`);
  const connection = await findUsableConnection(deps.pool, deps.llm.encryptionKey, projectId, req.provider);
  if (!connection) throw new BadRequest(`provider: the project has no LLM connection "${req.provider}"`);
  const prompt = await resolveUnsaved(deps.pool, projectId, req.name, req.type, req.prompt);
  const messages = messagesOf(prompt, req.variables, req.placeholders);
  const call = buildCompletionCall(connection, {
    model: req.model,
    messages,
    maxTokens: req.maxTokens,
    temperature: req.temperature,
  });
  const started = Date.now();
  let res: Awaited<ReturnType<typeof postJson>>;
  try {
    res = await postJson(deps.llm, call.url, call.headers, call.body, PLAYGROUND_TIMEOUT_MS);
  } catch (err) {
    if (err instanceof AddressRefused) throw new BadRequest(`provider: ${err.message}`);
    throw new HttpError(502, `provider ${req.provider} unreachable: ${(err as Error).message}`);
  }
  const latencyMs = Date.now() - started;
  const answer = readCompletion(connection.adapter, res.status, res.body, res.text);
  if (!answer.ok) throw new HttpError(502, answer.reason);
  const usage: Record<string, number> = { ...answer.usage };
  if (usage['input'] !== undefined && usage['output'] !== undefined)
    usage['total'] = usage['input'] + usage['output'];
  const priced = priceGeneration(await deps.models.pricingFor(projectId), {
    modelName: req.model,
    at: started,
    providedCost: {},
    providedUsage: usage,
    input: JSON.stringify(messages),
    output: answer.text,
    attributes: { modelParameters: {}, metadata: {} },
  });
  return {
    completion: answer.text,
    messages,
    usage: priced && Object.keys(priced.usage).length > 0 ? priced.usage : usage,
    cost: priced?.cost ?? null,
    latencyMs,
  };
}
