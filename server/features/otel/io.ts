import type { IndexedAttributes, PrefixGroup } from './attribute-index.ts';
import {
  type Attributes,
  attr,
  isMeaningful,
  isPlainObject,
  LF,
  parseJsonish,
  toAttributes,
  VERCEL_AI_SCOPE,
  VERCEL_INPUT_KEYS,
  VERCEL_OUTPUT_KEYS,
} from './attributes.ts';
import type { OtlpSpanEvent } from './otlp-types.ts';

/** Raw input and output of an observation, before JSON encoding; null when none was found. */
export interface InputOutput {
  input: unknown;
  output: unknown;
}

const NONE: InputOutput = { input: null, output: null };

interface IoSource {
  attrs: Attributes;
  index: IndexedAttributes;
  events: readonly OtlpSpanEvent[];
  scopeName: string;
}

/** A source yields input/output when it recognizes the span, or null to let the next one try. */
type Extractor = (src: IoSource) => InputOutput | null;

/** The pair when either side is truthy (the reference server's test for "this framework set it"). */
function pair(input: unknown, output: unknown): InputOutput | null {
  return input || output ? { input: input ?? null, output: output ?? null } : null;
}

function keys(attrs: Attributes, a: string, b: string): InputOutput | null {
  return pair(attr(attrs, a), attr(attrs, b));
}

const langfuse: Extractor = ({ attrs }) => {
  const input = attr(attrs, LF.OBSERVATION_INPUT);
  const output = attr(attrs, LF.OBSERVATION_OUTPUT);
  return input != null || output != null ? { input: input ?? null, output: output ?? null } : null;
};

/** Vercel AI SDK (scope `ai`); `ai.result.*` are the names used before AI SDK 4. */
const vercel: Extractor = ({ attrs, scopeName }) => {
  if (scopeName !== VERCEL_AI_SCOPE) return null;
  const has = (k: string) => Object.hasOwn(attrs, k);
  const firstPresent = (...ks: string[]) => {
    const k = ks.find(has);
    return k === undefined ? null : attr(attrs, k);
  };
  const input = firstPresent(...VERCEL_INPUT_KEYS);
  let output: unknown;
  if (has('ai.response.text') && has('ai.response.toolCalls')) {
    output = JSON.stringify({
      role: 'assistant',
      content: attr(attrs, 'ai.response.text'),
      tool_calls: attr(attrs, 'ai.response.toolCalls'),
    });
  } else if (attr(attrs, 'ai.response.text')) {
    output = attr(attrs, 'ai.response.text');
  } else {
    output = firstPresent(...VERCEL_OUTPUT_KEYS);
  }
  // The Vercel branch is final for its scope, even when empty.
  return { input: input ?? null, output: output ?? null };
};

export const GENAI_MESSAGE_EVENTS: ReadonlySet<string> = new Set([
  'gen_ai.system.message',
  'gen_ai.user.message',
  'gen_ai.assistant.message',
  'gen_ai.tool.message',
]);

/** OTel GenAI event convention: one event per message, `gen_ai.choice` per completion choice. */
const genAiEvents: Extractor = ({ events }) => {
  const inputs = events.filter((e) => GENAI_MESSAGE_EVENTS.has(e.name));
  const choices = events.filter((e) => e.name === 'gen_ai.choice');
  if (inputs.length === 0 && choices.length === 0) return null;
  const input =
    inputs.length > 0
      ? inputs.map((e) => ({
          role: e.name.slice('gen_ai.'.length, -'.message'.length),
          ...toAttributes(e.attributes),
        }))
      : null;
  const outputs = choices.map((e) => toAttributes(e.attributes));
  return { input, output: outputs.length === 0 ? null : outputs.length === 1 ? outputs[0] : outputs };
};

/** Semantic Kernel's older events carrying the whole prompt/completion as one attribute. */
const legacyContentEvents: Extractor = ({ events }) => {
  const prompt = events.find((e) => e.name === 'gen_ai.content.prompt');
  const completion = events.find((e) => e.name === 'gen_ai.content.completion');
  if (!prompt && !completion) return null;
  const promptAttrs = prompt ? toAttributes(prompt.attributes) : null;
  const completionAttrs = completion ? toAttributes(completion.attributes) : null;
  return {
    input: promptAttrs ? (attr(promptAttrs, 'gen_ai.prompt') ?? promptAttrs) : null,
    output: completionAttrs ? (attr(completionAttrs, 'gen_ai.completion') ?? completionAttrs) : null,
  };
};

/** Google ADK sets llm_request/llm_response to "{}" on tool spans and uses the tool_* keys instead. */
const vertexAdk: Extractor = ({ attrs }) => {
  const emptyish = (v: unknown) => !v || v === '{}';
  let input: unknown = attr(attrs, 'gcp.vertex.agent.llm_request');
  let output: unknown = attr(attrs, 'gcp.vertex.agent.llm_response');
  if (emptyish(input)) input = attr(attrs, 'gcp.vertex.agent.tool_call_args');
  if (emptyish(output)) output = attr(attrs, 'gcp.vertex.agent.tool_response');
  return pair(input, output);
};

const liveKit: Extractor = ({ attrs }) =>
  pair(
    attr(attrs, 'lk.input_text') ?? attr(attrs, 'lk.user_transcript') ?? attr(attrs, 'lk.chat_ctx'),
    attr(attrs, 'lk.function_tool.output') || attr(attrs, 'lk.response.text'),
  );

/** Logfire's single `events` attribute: the GenAI events as a JSON array, `gen_ai.choice` being the output. */
const logfireEvents: Extractor = ({ attrs }) => {
  const raw = attr(attrs, 'events');
  if (typeof raw !== 'string' && !Array.isArray(raw)) return null;
  const parsed = parseJsonish(raw);
  const list = Array.isArray(parsed) ? parsed : [];
  const isChoice = (e: unknown) => isPlainObject(e) && e['event.name'] === 'gen_ai.choice';
  const choice = list.find(isChoice);
  const inputs = list.filter((e) => !isChoice(e));
  if (!choice && inputs.length === 0) return null;
  return { input: inputs.length > 0 ? inputs : null, output: choice ?? null };
};

/** Pydantic AI agent spans: all messages in, final result out (system instructions put in front). */
const pydanticAgent: Extractor = ({ attrs, scopeName }) => {
  if (scopeName !== 'pydantic-ai') return null;
  const result = pair(attr(attrs, 'pydantic_ai.all_messages'), attr(attrs, 'final_result'));
  return result && { ...result, input: withSystemInstructions(result.input, attrs) };
};

/** Keys `prefix.<path>` rebuilt into nested arrays/objects (`gen_ai.prompt.0.role` → `[{role}]`). */
function unflatten(index: IndexedAttributes, prefix: PrefixGroup): unknown {
  const whole = attr(index.attrs, prefix);
  if (whole !== undefined && whole !== null && whole !== '') return whole;
  const paths: [string[], unknown][] = index.prefixed[prefix].map(([rest, value]) => [
    rest.split('.'),
    value,
  ]);
  const isIndex = (segment: string | undefined) => segment !== undefined && /^\d+$/.test(segment);
  const root: Record<string, unknown> | unknown[] = paths.some(([p]) => isIndex(p[0])) ? [] : {};
  for (const [path, value] of paths) {
    let node: Record<string, unknown> = root as Record<string, unknown>;
    for (let i = 0; i < path.length; i++) {
      const segment = path[i]!;
      if (segment === '__proto__') break; // never walk into a prototype
      if (i === path.length - 1) {
        node[segment] = value;
        break;
      }
      const existing = node[segment];
      if (typeof existing !== 'object' || existing === null) node[segment] = isIndex(path[i + 1]) ? [] : {};
      node = node[segment] as Record<string, unknown>;
    }
  }
  return root;
}

function prefixed(
  index: IndexedAttributes,
  inputPrefix: PrefixGroup,
  outputPrefix: PrefixGroup,
): InputOutput | null {
  const has = (p: PrefixGroup) => Object.hasOwn(index.attrs, p) || index.prefixed[p].length > 0;
  if (!has(inputPrefix) && !has(outputPrefix)) return null;
  return { input: unflatten(index, inputPrefix), output: unflatten(index, outputPrefix) };
}

/** OTel GenAI semantic conventions (current): JSON message arrays, system instructions kept separately. */
const genAiMessages: Extractor = ({ attrs }) => {
  const result = keys(attrs, 'gen_ai.input.messages', 'gen_ai.output.messages');
  return result && { ...result, input: withSystemInstructions(result.input, attrs) };
};

/** System messages from `gen_ai.system_instructions` (text parts joined, or structured messages kept). */
function systemMessages(value: unknown): Record<string, unknown>[] {
  if (!isMeaningful(value)) return [];
  const parsed = parseJsonish(value);
  if (parsed === undefined) return [{ role: 'system', content: value }]; // not JSON: the text itself
  if (typeof parsed === 'string') return parsed ? [{ role: 'system', content: parsed }] : [];
  if (!Array.isArray(parsed)) return isPlainObject(parsed) ? [{ role: 'system', ...parsed }] : [];
  const structured = parsed.every((p) => isPlainObject(p) && Array.isArray(p.parts));
  if (structured && parsed.length > 0) {
    return parsed.map((p) => ({
      ...(p as Record<string, unknown>),
      role: (p as Record<string, unknown>).role ?? 'system',
    }));
  }
  const texts: string[] = [];
  for (const p of parsed) {
    if (typeof p === 'string') texts.push(p);
    else if (isPlainObject(p) && typeof p.content === 'string') texts.push(p.content);
    else if (isPlainObject(p) && Array.isArray(p.parts)) {
      for (const part of p.parts)
        if (isPlainObject(part) && typeof part.content === 'string') texts.push(part.content);
    }
  }
  return texts.length > 0 ? [{ role: 'system', content: texts.join('\n') }] : [];
}

/** Puts system instructions in front of the input messages unless the messages already have a system message. */
export function withSystemInstructions(input: unknown, attrs: Attributes): unknown {
  const system = systemMessages(attr(attrs, 'gen_ai.system_instructions'));
  if (system.length === 0) return input;
  const parsed = parseJsonish(input);
  const messages = Array.isArray(parsed) ? parsed : input == null ? [] : null;
  if (messages === null) return input;
  if (messages.some((m) => isPlainObject(m) && m.role === 'system')) return input;
  return [...system, ...messages];
}

/** Reference-server order: Langfuse first, then frameworks from most to least specific. */
const EXTRACTORS: readonly Extractor[] = [
  langfuse,
  vercel,
  genAiEvents,
  legacyContentEvents,
  vertexAdk,
  ({ attrs }) => keys(attrs, 'prompt', 'all_messages_events'), // Logfire
  liveKit,
  logfireEvents,
  ({ attrs }) => keys(attrs, 'mlflow.spanInputs', 'mlflow.spanOutputs'),
  ({ attrs }) => keys(attrs, 'traceloop.entity.input', 'traceloop.entity.output'),
  ({ attrs }) => keys(attrs, 'input.value', 'output.value'), // OpenInference (SmolAgents, …)
  ({ attrs }) => keys(attrs, 'input', 'output'), // Pydantic, Pipecat
  pydanticAgent,
  ({ attrs }) => keys(attrs, 'tool_arguments', 'tool_response'), // Pydantic AI tools
  ({ index }) => prefixed(index, 'gen_ai.prompt', 'gen_ai.completion'), // Traceloop/OpenLLMetry
  ({ index }) => prefixed(index, 'llm.input_messages', 'llm.output_messages'), // OpenInference messages
  genAiMessages,
  ({ attrs }) => keys(attrs, 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result'),
];

/** Input and output of an observation from the first source that recognizes the span. */
export function extractInputOutput(
  index: IndexedAttributes,
  events: readonly OtlpSpanEvent[],
  scopeName: string,
): InputOutput {
  const src = { attrs: index.attrs, index, events, scopeName };
  for (const extract of EXTRACTORS) {
    const result = extract(src);
    if (result) return result;
  }
  return NONE;
}
