import { type Attributes, type AttrValue, LF, VERCEL_INPUT_KEYS, VERCEL_OUTPUT_KEYS } from './attributes.ts';

/**
 * One span's attributes, sorted in a single pass into the groups that the extraction steps read by
 * prefix (metadata, usage, model parameters, flattened messages, what is left for
 * `metadata.attributes`). Every step then reads its group or looks keys up, so mapping a span
 * costs one walk over its attributes however many steps read them.
 */
export interface IndexedAttributes {
  attrs: Attributes;
  /** `[key without prefix, value]` in attribute order, per metadata domain. */
  metadata: { trace: [string, AttrValue][]; observation: [string, AttrValue][] };
  /** `gen_ai.usage.*` (but `gen_ai.usage.cost`) and `llm.token_count.*`, keys without prefix. */
  usage: [string, AttrValue][];
  /** Keys under a prefix (`llm.invocation_parameters.`, `gen_ai.prompt.`, …), prefix removed. */
  prefixed: Record<PrefixGroup, [string, AttrValue][]>;
  /** Attributes that carry no input/output, as they are. */
  remaining: [string, AttrValue][];
}

export const PREFIX_GROUPS = [
  'llm.invocation_parameters',
  'gen_ai.request',
  'gen_ai.prompt',
  'gen_ai.completion',
  'llm.input_messages',
  'llm.output_messages',
] as const;
export type PrefixGroup = (typeof PREFIX_GROUPS)[number];

const TRACE_META = `${LF.TRACE_METADATA}.`;
const OBS_META = `${LF.OBSERVATION_METADATA}.`;
const SHARED_META = ['langfuse.metadata.', 'ai.telemetry.metadata.'];

/** Vercel AI SDK metadata keys that are trace fields, not metadata. */
const VERCEL_TRACE_KEYS = new Set([
  'ai.telemetry.metadata.userId',
  'ai.telemetry.metadata.sessionId',
  'ai.telemetry.metadata.tags',
  'ai.telemetry.metadata.langfusePrompt',
]);

/** Keys some framework uses for input/output; never repeated in metadata.attributes, whichever one was used. */
const IO_KEYS = new Set<string>([
  LF.TRACE_INPUT,
  LF.TRACE_OUTPUT,
  LF.OBSERVATION_INPUT,
  LF.OBSERVATION_OUTPUT,
  ...VERCEL_INPUT_KEYS,
  'ai.response.text',
  ...VERCEL_OUTPUT_KEYS,
  'gcp.vertex.agent.llm_request',
  'gcp.vertex.agent.llm_response',
  'gcp.vertex.agent.tool_call_args',
  'gcp.vertex.agent.tool_response',
  'prompt',
  'all_messages_events',
  'events',
  'lk.input_text',
  'lk.user_transcript',
  'lk.chat_ctx',
  'lk.user_input',
  'lk.function_tool.output',
  'lk.response.text',
  'mlflow.spanInputs',
  'mlflow.spanOutputs',
  'traceloop.entity.input',
  'traceloop.entity.output',
  'input.value',
  'output.value',
  'final_result',
  'pydantic_ai.all_messages',
  'input',
  'output',
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
]);
const IO_PREFIXES = ['gen_ai.prompt', 'gen_ai.completion', 'llm.input_messages', 'llm.output_messages'];

const USAGE_PREFIXES = ['gen_ai.usage.', 'llm.token_count.'];
const [L, G, A] = ['l', 'g', 'a'].map((c) => c.charCodeAt(0));

/** The one walk over a span's (or a resource's) attributes. */
export function indexAttributes(attrs: Attributes): IndexedAttributes {
  const index: IndexedAttributes = {
    attrs,
    metadata: { trace: [], observation: [] },
    usage: [],
    prefixed: Object.fromEntries(
      PREFIX_GROUPS.map((g) => [g, []]),
    ) as unknown as IndexedAttributes['prefixed'],
    remaining: [],
  };
  for (const [key, value] of Object.entries(attrs)) {
    // Every prefix read below starts with `l`, `g` or `a`: other keys skip the prefix tests.
    const first = key.charCodeAt(0);
    if (first !== L && first !== G && first !== A) {
      if (!IO_KEYS.has(key)) index.remaining.push([key, value]);
      continue;
    }
    if (!IO_KEYS.has(key) && !IO_PREFIXES.some((p) => key.startsWith(p))) index.remaining.push([key, value]);
    if (key.startsWith(TRACE_META)) index.metadata.trace.push([key.slice(TRACE_META.length), value]);
    else if (key.startsWith(OBS_META)) index.metadata.observation.push([key.slice(OBS_META.length), value]);
    else if (!VERCEL_TRACE_KEYS.has(key)) {
      const shared = SHARED_META.find((p) => key.startsWith(p));
      if (shared !== undefined) {
        const entry: [string, AttrValue] = [key.slice(shared.length), value];
        index.metadata.trace.push(entry);
        index.metadata.observation.push(entry);
      }
    }
    if (key !== 'gen_ai.usage.cost') {
      const usage = USAGE_PREFIXES.find((p) => key.startsWith(p));
      if (usage !== undefined) index.usage.push([key.slice(usage.length), value]);
    }
    for (const group of PREFIX_GROUPS) {
      if (key.length > group.length && key.startsWith(group) && key[group.length] === '.') {
        index.prefixed[group].push([key.slice(group.length + 1), value]);
      }
    }
  }
  return index;
}
