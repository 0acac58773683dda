import type { ObservationType } from '../write-model/bodies.ts';
import { type Attributes, attr, isMeaningful, LF } from './attributes.ts';

/** What a type mapper may look at. */
export interface TypeInput {
  attrs: Attributes;
  resourceAttrs: Attributes;
  scopeName: string;
  scopeVersion: string;
  spanName: string;
}

/** A mapper returns a type, or null to let the next one decide. Order is priority. */
type TypeMapper = (input: TypeInput) => ObservationType | null;

function lookup(
  table: Record<string, ObservationType>,
  value: unknown,
  ignoreCase: boolean,
): ObservationType | null {
  if (typeof value !== 'string') return null;
  const key = ignoreCase ? value.trim().toLowerCase() : value.trim();
  return Object.hasOwn(table, key) ? table[key]! : null;
}

const LANGFUSE_TYPES: Record<string, ObservationType> = {
  span: 'SPAN',
  generation: 'GENERATION',
  event: 'EVENT',
  embedding: 'EMBEDDING',
  agent: 'AGENT',
  tool: 'TOOL',
  chain: 'CHAIN',
  retriever: 'RETRIEVER',
  guardrail: 'GUARDRAIL',
  evaluator: 'EVALUATOR',
};

/** OpenInference `openinference.span.kind` values (upper case by that convention). */
const OPENINFERENCE_KINDS: Record<string, ObservationType> = {
  CHAIN: 'CHAIN',
  RETRIEVER: 'RETRIEVER',
  LLM: 'GENERATION',
  EMBEDDING: 'EMBEDDING',
  AGENT: 'AGENT',
  TOOL: 'TOOL',
  GUARDRAIL: 'GUARDRAIL',
  EVALUATOR: 'EVALUATOR',
};

/**
 * OTel GenAI `gen_ai.operation.name` values; `completion` predates the spec's `text_completion`.
 * `retrieval` is ours (the reference has no entry for it): a vector-store search is what RETRIEVER means.
 */
const GENAI_OPERATIONS: Record<string, ObservationType> = {
  chat: 'GENERATION',
  completion: 'GENERATION',
  text_completion: 'GENERATION',
  generate_content: 'GENERATION',
  generate: 'GENERATION',
  embeddings: 'EMBEDDING',
  invoke_agent: 'AGENT',
  create_agent: 'AGENT',
  execute_tool: 'TOOL',
  retrieval: 'RETRIEVER',
};

/** Generation-like attributes that Python SDK ≤ 3.3 set while still labelling the span `span`. */
const GENERATION_KEYS = [
  LF.OBSERVATION_MODEL,
  LF.OBSERVATION_COST_DETAILS,
  LF.OBSERVATION_USAGE_DETAILS,
  LF.OBSERVATION_COMPLETION_START_TIME,
  LF.OBSERVATION_MODEL_PARAMETERS,
  LF.OBSERVATION_PROMPT_NAME,
  LF.OBSERVATION_PROMPT_VERSION,
];

const pythonSdkLegacyGeneration: TypeMapper = ({ attrs, resourceAttrs, scopeName, scopeVersion }) => {
  if (attr(attrs, LF.OBSERVATION_TYPE) !== 'span' || scopeName !== 'langfuse-sdk') return null;
  if (attr(resourceAttrs, 'telemetry.sdk.language') !== 'python') return null;
  if (scopeVersion) {
    const [major = 0, minor = 0] = scopeVersion.split('.').map(Number);
    if (major > 3 || (major === 3 && minor > 3)) return null;
  }
  return GENERATION_KEYS.some((k) => Object.hasOwn(attrs, k)) ? 'GENERATION' : null;
};

/** Vercel AI SDK spans name their operation in `operation.name` (prefix, may carry a function id) or `ai.operationId`. */
function vercelOperationIs(attrs: Attributes, operations: readonly string[]): boolean {
  const opName = attr(attrs, 'operation.name');
  const opId = attr(attrs, 'ai.operationId');
  return (
    (typeof opName === 'string' && operations.some((o) => opName.startsWith(o))) ||
    (typeof opId === 'string' && operations.includes(opId))
  );
}

const VERCEL_GENERATION_OPS = [
  'ai.generateText.doGenerate',
  'ai.streamText.doStream',
  'ai.generateObject.doGenerate',
  'ai.streamObject.doStream',
];
const VERCEL_EMBEDDING_OPS = ['ai.embedMany.doEmbed', 'ai.embed.doEmbed'];
const VERCEL_MODEL_KEYS = [
  LF.OBSERVATION_MODEL,
  'ai.model.id',
  'gen_ai.request.model',
  'gen_ai.response.model',
];

/** Provider calls become generations/embeddings, but only when a model is named (wrapper spans have none). */
const vercelModelCall: TypeMapper = ({ attrs }) => {
  if (!VERCEL_MODEL_KEYS.some((k) => isMeaningful(attr(attrs, k)))) return null;
  if (vercelOperationIs(attrs, VERCEL_GENERATION_OPS)) return 'GENERATION';
  if (vercelOperationIs(attrs, VERCEL_EMBEDDING_OPS)) return 'EMBEDDING';
  return null;
};

const vercelToolCall: TypeMapper = ({ attrs }) => (vercelOperationIs(attrs, ['ai.toolCall']) ? 'TOOL' : null);

/** Frameworks (e.g. Pydantic AI) that mark tool calls only through gen_ai.tool.* attributes. */
const genAiTool: TypeMapper = ({ attrs }) =>
  isMeaningful(attr(attrs, 'gen_ai.tool.name')) || isMeaningful(attr(attrs, 'gen_ai.tool.call.id'))
    ? 'TOOL'
    : null;

/** LiveKit Agents types its spans only by name. */
const liveKit: TypeMapper = ({ scopeName, spanName }) => {
  if (scopeName !== 'livekit-agents') return null;
  if (spanName === 'agent_turn' || spanName === 'start_agent_activity') return 'AGENT';
  return spanName === 'function_tool' ? 'TOOL' : null;
};

const MODEL_KEYS_FOR_TYPE = [
  LF.OBSERVATION_MODEL,
  'gen_ai.request.model',
  'gen_ai.response.model',
  'llm.model_name',
  'model',
];

/** Last resort: a span that names a model is an LLM call. */
const modelNamed: TypeMapper = ({ attrs }) =>
  MODEL_KEYS_FOR_TYPE.some((k) => isMeaningful(attr(attrs, k))) ? 'GENERATION' : null;

/** Priority order of the reference server (first non-null wins). */
const MAPPERS: readonly TypeMapper[] = [
  pythonSdkLegacyGeneration,
  // Case-insensitive here (the reference is not): an upper-case value can only mean the same type.
  ({ attrs }) => lookup(LANGFUSE_TYPES, attr(attrs, LF.OBSERVATION_TYPE), true),
  ({ attrs }) => lookup(OPENINFERENCE_KINDS, attr(attrs, 'openinference.span.kind'), false),
  ({ attrs }) => lookup(GENAI_OPERATIONS, attr(attrs, 'gen_ai.operation.name'), false),
  vercelModelCall,
  vercelToolCall,
  genAiTool,
  liveKit,
  modelNamed,
];

/** Observation type of a span. */
export function mapObservationType(input: TypeInput): ObservationType {
  for (const mapper of MAPPERS) {
    const type = mapper(input);
    if (type) return type;
  }
  return 'SPAN';
}
