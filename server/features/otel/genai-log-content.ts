/**
 * The content of a model call carried by GenAI log events (pure): the legacy per-message events
 * (`gen_ai.{system,user,assistant,tool}.message`, `gen_ai.choice`) and the current
 * `gen_ai.client.inference.operation.details` (`gen_ai.input.messages`, `gen_ai.output.messages`,
 * `gen_ai.system_instructions`). The same function reads the records of one export and the
 * records already stored as events of the observation, so the result depends on the set of
 * records, never on the order in which they or the span arrived.
 */
import { type Attributes, asText, attr, isMeaningful, isPlainObject, parseJsonish } from './attributes.ts';
import { GENAI_MESSAGE_EVENTS, withSystemInstructions } from './io.ts';

export const GENAI_CHOICE_EVENT = 'gen_ai.choice';
export const GENAI_DETAILS_EVENT = 'gen_ai.client.inference.operation.details';

/** Every event name that carries content (the events tables are searched for these). */
export const GENAI_CONTENT_EVENTS: readonly string[] = [
  ...GENAI_MESSAGE_EVENTS,
  GENAI_CHOICE_EVENT,
  GENAI_DETAILS_EVENT,
];

/** Whether a log event of this name carries the content of its span's model call. */
export function isGenAiContentEvent(name: string): boolean {
  return GENAI_CONTENT_EVENTS.includes(name);
}

/** One GenAI log event as the content needs it. */
export interface GenAiRecord {
  name: string;
  /** Nanoseconds since the epoch (decimal string): messages are put in this order. */
  timeUnixNano: string;
  body: unknown;
  attributes: Attributes;
}

/** What the records give the observation; a null field is one they do not carry. */
export interface GenAiContent {
  input: string | null;
  output: string | null;
  /** Each tool call the model made, as JSON (`{id, name, arguments}`). */
  toolCalls: string[];
  toolCallNames: string[];
}

const byTime = (a: GenAiRecord, b: GenAiRecord) => {
  const [x, y] = [BigInt(a.timeUnixNano || '0'), BigInt(b.timeUnixNano || '0')];
  return x < y ? -1 : x > y ? 1 : 0;
};

/** A structured attribute may arrive as JSON text (SDKs without complex attribute values). */
const structured = (value: unknown) => (typeof value === 'string' ? (parseJsonish(value) ?? value) : value);

/** The records' content, or null when none of them is a GenAI content event. */
export function genAiContent(records: readonly GenAiRecord[]): GenAiContent | null {
  const ordered = records.filter((r) => isGenAiContentEvent(r.name)).sort(byTime);
  if (ordered.length === 0) return null;
  const details = ordered.filter((r) => r.name === GENAI_DETAILS_EVENT).at(-1);
  const messages = ordered.filter((r) => GENAI_MESSAGE_EVENTS.has(r.name)).map(legacyMessage);
  const choices = ordered.filter((r) => r.name === GENAI_CHOICE_EVENT).map(legacyChoice);

  let input: unknown = messages.length > 0 ? messages : null;
  let output: unknown = choices.length === 0 ? null : choices.length === 1 ? choices[0] : choices;
  if (details) {
    const attrs = detailsAttributes(details);
    const inputMessages = structured(attr(attrs, 'gen_ai.input.messages'));
    const outputMessages = structured(attr(attrs, 'gen_ai.output.messages'));
    const detailedInput = withSystemInstructions(isMeaningful(inputMessages) ? inputMessages : null, {
      'gen_ai.system_instructions': attr(attrs, 'gen_ai.system_instructions') ?? null,
    });
    if (isMeaningful(detailedInput)) input = detailedInput;
    if (isMeaningful(outputMessages)) output = outputMessages;
  }
  const calls = toolCalls(output);
  return {
    input: isMeaningful(input) ? asText(input) : null,
    output: isMeaningful(output) ? asText(output) : null,
    toolCalls: calls.map((c) => JSON.stringify(c)),
    toolCallNames: calls.map((c) => c.name),
  };
}

/** The details event's fields are attributes by the conventions; some producers put them in the body. */
function detailsAttributes(r: GenAiRecord): Attributes {
  return isPlainObject(r.body) ? { ...(r.body as Attributes), ...r.attributes } : r.attributes;
}

/** `gen_ai.user.message` with body `{content}` → `{role: 'user', content}` (a role in the body wins). */
function legacyMessage(r: GenAiRecord): Record<string, unknown> {
  const role = r.name.slice('gen_ai.'.length, -'.message'.length);
  const body = structured(r.body);
  return isPlainObject(body) ? { role, ...body } : { role, content: body };
}

/** A choice's message with its role (assistant unless told), or the choice itself when it has none. */
function legacyChoice(r: GenAiRecord): unknown {
  const body = structured(r.body);
  if (!isPlainObject(body)) return body;
  const message = body['message'];
  if (!isPlainObject(message)) return body;
  const extra = body['finish_reason'] === undefined ? {} : { finish_reason: body['finish_reason'] };
  return { role: 'assistant', ...message, ...extra };
}

interface ToolCall {
  id: string | null;
  name: string;
  arguments: unknown;
}

/**
 * Tool calls in the output: current conventions' `tool_call` parts (`{type, id, name, arguments}`)
 * and OpenAI-style `tool_calls` (`{id, function: {name, arguments}}`) of the legacy events.
 */
function toolCalls(output: unknown): ToolCall[] {
  const messages = Array.isArray(output) ? output : [output];
  const out: ToolCall[] = [];
  for (const m of messages) {
    if (!isPlainObject(m)) continue;
    for (const part of Array.isArray(m['parts']) ? m['parts'] : []) {
      if (isPlainObject(part) && part['type'] === 'tool_call' && typeof part['name'] === 'string')
        out.push({ id: idOf(part['id']), name: part['name'], arguments: part['arguments'] ?? null });
    }
    for (const call of Array.isArray(m['tool_calls']) ? m['tool_calls'] : []) {
      const fn = isPlainObject(call) ? call['function'] : undefined;
      if (isPlainObject(fn) && typeof fn['name'] === 'string')
        out.push({ id: idOf(call['id']), name: fn['name'], arguments: fn['arguments'] ?? null });
    }
  }
  return out;
}

const idOf = (v: unknown) => (typeof v === 'string' ? v : null);
