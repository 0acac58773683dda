import type { IndexedAttributes, PrefixGroup } from './attribute-index.ts';
import {
  type Attributes,
  asText,
  attr,
  firstText,
  isPlainObject,
  LF,
  parseJsonish,
  VERCEL_AI_SCOPE,
} from './attributes.ts';

/** Sources of the model name, first match wins (response model before request model: it is what actually ran). */
const MODEL_NAME_KEYS = [
  LF.OBSERVATION_MODEL,
  'gen_ai.response.model',
  'ai.model.id',
  'gen_ai.request.model',
  'llm.response.model',
  'llm.model_name',
  'model',
];

export function extractModelName(attrs: Attributes): string | null {
  return firstText(attrs, MODEL_NAME_KEYS);
}

/** Model parameters are stored as string → string; nulls carry no information and are left out. */
function stringValues(obj: Record<string, unknown>): Record<string, string> {
  const entries: [string, string][] = [];
  for (const [key, value] of Object.entries(obj)) {
    if (value !== undefined && value !== null) entries.push([key, asText(value)]);
  }
  return Object.fromEntries(entries);
}

function jsonObjectAttr(attrs: Attributes, key: string): Record<string, unknown> | null {
  const value = attr(attrs, key);
  if (!value) return null;
  const parsed = parseJsonish(value);
  return isPlainObject(parsed) ? parsed : null;
}

/** Vercel AI SDK call settings, named as the reference server names them. */
function vercelParameters(attrs: Attributes): Record<string, unknown> {
  const pick = (...keys: string[]) => keys.map((k) => attr(attrs, k)).find((v) => v !== undefined);
  return {
    maxSteps: pick('ai.settings.maxSteps'),
    toolChoice: pick('ai.prompt.toolChoice'),
    maxTokens: pick('gen_ai.request.max_tokens'),
    finishReason: pick('gen_ai.response.finish_reasons', 'gen_ai.finishReason'),
    // `gen_ai.provider.name` replaced `gen_ai.system` in the GenAI conventions; both are read.
    system: pick('gen_ai.provider.name', 'gen_ai.system', 'ai.model.provider'),
    maxRetries: pick('ai.settings.maxRetries'),
    mode: pick('ai.settings.mode'),
    temperature: pick('gen_ai.request.temperature'),
  };
}

/** Keys of a prefix group, except `skip` (and the prefix itself followed by nothing). */
function dotted(
  index: IndexedAttributes,
  group: PrefixGroup,
  skip: readonly string[] = [],
): Record<string, unknown> {
  return Object.fromEntries(index.prefixed[group].filter(([name]) => name !== '' && !skip.includes(name)));
}

/**
 * Model parameters, first source that applies: Langfuse JSON attribute; Vercel AI SDK settings (scope `ai`);
 * OpenInference `llm.invocation_parameters` (JSON, or dotted keys); `model_config` JSON; `gen_ai.request.*`.
 */
export function extractModelParameters(index: IndexedAttributes, scopeName: string): Record<string, string> {
  const { attrs } = index;
  const langfuse = jsonObjectAttr(attrs, LF.OBSERVATION_MODEL_PARAMETERS);
  if (langfuse) return stringValues(langfuse);
  if (scopeName === VERCEL_AI_SCOPE) return stringValues(vercelParameters(attrs));
  const invocation = jsonObjectAttr(attrs, 'llm.invocation_parameters');
  if (invocation) return stringValues(invocation);
  const invocationDotted = dotted(index, 'llm.invocation_parameters');
  if (Object.keys(invocationDotted).length > 0) return stringValues(invocationDotted);
  const modelConfig = jsonObjectAttr(attrs, 'model_config');
  if (modelConfig) return stringValues(modelConfig);
  return stringValues(dotted(index, 'gen_ai.request', ['model']));
}
