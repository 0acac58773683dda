import { type Attributes, asText, attr, isPlainObject, LF, parseJsonish } from './attributes.ts';

/** Vercel AI SDK metadata keys that are trace fields, not metadata. */
const VERCEL_TRACE_KEYS = new Set([
  'ai.telemetry.metadata.userId',
  'ai.telemetry.metadata.sessionId',
  'ai.telemetry.metadata.tags',
  'ai.telemetry.metadata.langfusePrompt',
]);

/**
 * User metadata of one domain: the JSON object in `langfuse.<domain>.metadata` (or `langfuse.metadata`),
 * overlaid by dotted keys `langfuse.<domain>.metadata.<k>`, `langfuse.metadata.<k>` and
 * `ai.telemetry.metadata.<k>`, plus Vercel's `ai.prompt.tools`. A value that is not a JSON object is dropped,
 * as by the reference server.
 */
export function extractMetadata(attrs: Attributes, domain: 'trace' | 'observation'): Record<string, unknown> {
  const prefix = domain === 'trace' ? LF.TRACE_METADATA : LF.OBSERVATION_METADATA;
  const whole = parseJsonish(attr(attrs, prefix) || attr(attrs, 'langfuse.metadata'));
  // Entries + fromEntries throughout: a `__proto__` key stays an ordinary key instead of replacing the prototype.
  const entries: [string, unknown][] = isPlainObject(whole) ? Object.entries(whole) : [];
  for (const [key, value] of Object.entries(attrs)) {
    if (VERCEL_TRACE_KEYS.has(key)) continue;
    for (const p of [prefix, 'langfuse.metadata', 'ai.telemetry.metadata']) {
      if (key.startsWith(`${p}.`)) entries.push([key.slice(p.length + 1), value]);
    }
  }
  const tools = attr(attrs, 'ai.prompt.tools');
  if (tools) entries.push(['tools', tools]);
  return Object.fromEntries(entries);
}

/** Keys some framework uses for input/output; never repeated in metadata.attributes, whichever one was used. */
const IO_KEYS = new Set([
  LF.TRACE_INPUT,
  LF.TRACE_OUTPUT,
  LF.OBSERVATION_INPUT,
  LF.OBSERVATION_OUTPUT,
  'ai.prompt.messages',
  'ai.prompt',
  'ai.toolCall.args',
  'ai.response.text',
  'ai.result.text',
  'ai.toolCall.result',
  'ai.response.object',
  'ai.result.object',
  'ai.response.toolCalls',
  'ai.result.toolCalls',
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

/** Span attributes minus input/output carriers, each value as a string: `metadata.attributes` for foreign scopes. */
export function remainingAttributes(attrs: Attributes): Record<string, string> {
  const entries: [string, string][] = [];
  for (const [key, value] of Object.entries(attrs)) {
    if (IO_KEYS.has(key) || IO_PREFIXES.some((p) => key.startsWith(p))) continue;
    entries.push([key, asText(value)]);
  }
  return Object.fromEntries(entries);
}
