/**
 * The OTel GenAI conventions' attributes, one table row of docs/otel-genai.md at a time. Expected
 * values come from the conventions (registry `gen-ai.md`: units, what counts include) and from the
 * reference's OTel processor and its own tests (usage names, subtraction, agent spans).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { OtelObservation } from '../../server/features/otel/types.ts';
import { mapOne, type SpanSpec } from './otel-span.ts';

interface Row {
  /** The row's first cell in docs/otel-genai.md, as written there. */
  row: string;
  span: SpanSpec;
  /** Each listed field must equal exactly. */
  expected: Partial<OtelObservation>;
  /** Entries `metadata.attributes` must hold (values as text, as the reference keeps them). */
  attributes?: Record<string, unknown>;
}

const op = (value: string) => `\`gen_ai.operation.name\` = \`${value}\``;
const type = (operation: string, expected: OtelObservation['type']): Row => ({
  row: op(operation),
  span: { attrs: { 'gen_ai.operation.name': operation } },
  expected: { type: expected },
});
const VERCEL = { name: 'ai' };
const HISTORY = '[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]';
const ANSWER =
  '[{"role":"assistant","parts":[{"type":"text","content":"Rainy, 57°F."}],"finish_reason":"stop"}]';

const ROWS: Row[] = [
  type('chat', 'GENERATION'),
  type('text_completion', 'GENERATION'),
  type('generate_content', 'GENERATION'),
  type('embeddings', 'EMBEDDING'),
  type('retrieval', 'RETRIEVER'),
  type('create_agent', 'AGENT'),
  type('execute_tool', 'TOOL'),
  type('invoke_workflow', 'SPAN'),
  {
    row: op('invoke_agent'),
    span: {
      attrs: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 300,
        'gen_ai.usage.output_tokens': 90,
      },
    },
    expected: { type: 'AGENT', modelName: null, usageDetails: {}, costDetails: {} },
    attributes: { 'gen_ai.usage.input_tokens': '300' },
  },
  {
    row: '`gen_ai.provider.name`',
    span: { attrs: { 'gen_ai.provider.name': 'openai' } },
    expected: { modelParameters: {} },
    attributes: { 'gen_ai.provider.name': 'openai' },
  },
  {
    row: '`gen_ai.provider.name`',
    span: { scope: VERCEL, attrs: { 'gen_ai.provider.name': 'openai', 'gen_ai.system': 'openai.chat' } },
    expected: { modelParameters: { system: 'openai' } },
  },
  {
    row: '`gen_ai.system`',
    span: { attrs: { 'gen_ai.system': 'anthropic' } },
    expected: {},
    attributes: { 'gen_ai.system': 'anthropic' },
  },
  {
    row: '`gen_ai.system`',
    span: { scope: VERCEL, attrs: { 'gen_ai.system': 'anthropic' } },
    expected: { modelParameters: { system: 'anthropic' } },
  },
  {
    row: '`gen_ai.request.model`',
    span: { attrs: { 'gen_ai.request.model': 'gpt-4' } },
    expected: { modelName: 'gpt-4', type: 'GENERATION' },
  },
  {
    row: '`gen_ai.response.model`',
    span: { attrs: { 'gen_ai.request.model': 'gpt-4', 'gen_ai.response.model': 'gpt-4-0613' } },
    expected: { modelName: 'gpt-4-0613' },
  },
  {
    row: '`gen_ai.request.temperature` (and every other `gen_ai.request.*`)',
    span: {
      attrs: {
        'gen_ai.request.model': 'gpt-4',
        'gen_ai.request.temperature': 0.2,
        'gen_ai.request.max_tokens': 100,
        'gen_ai.request.top_p': 0.9,
      },
    },
    expected: { modelParameters: { temperature: '0.2', max_tokens: '100', top_p: '0.9' } },
  },
  {
    row: '`gen_ai.usage.input_tokens`',
    span: { attrs: { 'gen_ai.usage.input_tokens': 100 } },
    expected: { usageDetails: { input: 100 } },
  },
  {
    // The reference's own case: 100 input tokens, 20 read from and 10 written to the cache.
    row: '`gen_ai.usage.input_tokens`',
    span: {
      attrs: {
        'gen_ai.usage.input_tokens': 100,
        'gen_ai.usage.output_tokens': 40,
        'gen_ai.usage.total_tokens': 140,
        'gen_ai.usage.cache_read.input_tokens': 20,
        'gen_ai.usage.cache_creation.input_tokens': 10,
      },
    },
    expected: {
      usageDetails: { input: 70, output: 40, total: 140, input_cached_tokens: 20, input_cache_creation: 10 },
    },
  },
  {
    row: '`gen_ai.usage.output_tokens`',
    span: { attrs: { 'gen_ai.usage.output_tokens': 180 } },
    expected: { usageDetails: { output: 180 } },
  },
  {
    row: '`gen_ai.usage.cache_read.input_tokens`',
    span: { attrs: { 'gen_ai.usage.input_tokens': 100, 'gen_ai.usage.cache_read.input_tokens': 50 } },
    expected: { usageDetails: { input: 50, input_cached_tokens: 50 } },
  },
  {
    row: '`gen_ai.usage.cache_creation.input_tokens`',
    span: { attrs: { 'gen_ai.usage.input_tokens': 100, 'gen_ai.usage.cache_creation.input_tokens': 25 } },
    expected: { usageDetails: { input: 75, input_cache_creation: 25 } },
  },
  {
    // The reference's Google ADK case: 60 output tokens of which 25 reasoning.
    row: '`gen_ai.usage.reasoning.output_tokens`',
    span: { attrs: { 'gen_ai.usage.output_tokens': 60, 'gen_ai.usage.reasoning.output_tokens': 25 } },
    expected: { usageDetails: { output: 35, output_reasoning_tokens: 25 } },
  },
  {
    row: '`gen_ai.usage.reasoning.output_tokens`',
    span: { attrs: { 'gen_ai.usage.output_tokens': 10, 'gen_ai.usage.reasoning.output_tokens': 25 } },
    expected: { usageDetails: { output: 0, output_reasoning_tokens: 25 } },
  },
  {
    row: '`gen_ai.usage.prompt_tokens`',
    span: { attrs: { 'gen_ai.usage.prompt_tokens': 7 } },
    expected: { usageDetails: { input: 7 } },
  },
  {
    row: '`gen_ai.usage.completion_tokens`',
    span: { attrs: { 'gen_ai.usage.completion_tokens': 3 } },
    expected: { usageDetails: { output: 3 } },
  },
  {
    // The span starts at 2023-11-14T22:13:20.123456Z; the convention's unit is seconds.
    row: '`gen_ai.response.time_to_first_chunk`',
    span: { attrs: { 'gen_ai.response.time_to_first_chunk': 0.5 } },
    expected: { completionStartTime: '2023-11-14T22:13:20.623456Z' },
  },
  {
    row: '`gen_ai.response.time_to_first_chunk`',
    span: { attrs: { 'gen_ai.response.time_to_first_chunk': 1.2 } },
    expected: { completionStartTime: '2023-11-14T22:13:21.323456Z' },
  },
  {
    row: '`gen_ai.conversation.id`',
    span: { attrs: { 'gen_ai.conversation.id': 'conv_5j66UpCpwteGg4YSxUnt7lPY' } },
    expected: { sessionId: 'conv_5j66UpCpwteGg4YSxUnt7lPY' },
  },
  {
    row: '`gen_ai.conversation.id`',
    span: { attrs: { 'gen_ai.conversation.id': 'conv_1', 'session.id': 'session-1' } },
    expected: { sessionId: 'session-1' },
  },
  {
    row: '`gen_ai.input.messages`',
    span: { attrs: { 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': HISTORY } },
    expected: { input: HISTORY },
  },
  {
    row: '`gen_ai.system_instructions`',
    span: {
      attrs: {
        'gen_ai.input.messages': HISTORY,
        'gen_ai.system_instructions': '[{"type":"text","content":"You are a language translator."}]',
      },
    },
    expected: {
      input: JSON.stringify([
        { role: 'system', content: 'You are a language translator.' },
        ...JSON.parse(HISTORY),
      ]),
    },
  },
  {
    row: '`gen_ai.output.messages`',
    span: { attrs: { 'gen_ai.operation.name': 'chat', 'gen_ai.output.messages': ANSWER } },
    expected: { output: ANSWER },
  },
  {
    row: '`gen_ai.tool.name`',
    span: { name: 'execute_tool', attrs: { 'gen_ai.tool.name': 'Flights' } },
    expected: { name: 'Flights', type: 'TOOL' },
  },
  {
    row: '`gen_ai.tool.call.id`',
    span: { attrs: { 'gen_ai.tool.call.id': 'call_mszuSIzqtI65i1wAUOE8w5H4' } },
    expected: { type: 'TOOL' },
    attributes: { 'gen_ai.tool.call.id': 'call_mszuSIzqtI65i1wAUOE8w5H4' },
  },
  {
    row: '`gen_ai.tool.call.arguments`',
    span: {
      attrs: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.call.arguments': '{"location":"Paris"}',
      },
    },
    expected: { input: '{"location":"Paris"}' },
  },
  {
    row: '`gen_ai.tool.call.result`',
    span: {
      attrs: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.call.result': '{"conditions":"sunny"}' },
    },
    expected: { output: '{"conditions":"sunny"}' },
  },
  {
    row: '`gen_ai.agent.name` (and every other `gen_ai.*` not above)',
    span: {
      attrs: {
        'gen_ai.agent.name': 'Math Tutor',
        'gen_ai.agent.id': 'asst_5j66UpCpwteGg4YSxUnt7lPY',
        'gen_ai.response.id': 'chatcmpl-123',
        'gen_ai.response.finish_reasons': ['stop'],
        'gen_ai.data_source.id': 'H7STPQYOND',
      },
    },
    expected: { type: 'SPAN' },
    attributes: {
      'gen_ai.agent.name': 'Math Tutor',
      'gen_ai.agent.id': 'asst_5j66UpCpwteGg4YSxUnt7lPY',
      'gen_ai.response.id': 'chatcmpl-123',
      'gen_ai.response.finish_reasons': '["stop"]',
      'gen_ai.data_source.id': 'H7STPQYOND',
    },
  },
];

describe('OTel GenAI attributes (docs/otel-genai.md)', () => {
  it.each(ROWS)('$row', ({ span, expected, attributes }) => {
    const observation = mapOne(span);
    for (const [field, value] of Object.entries(expected)) {
      expect(observation[field as keyof OtelObservation], field).toEqual(value);
    }
    if (attributes) {
      expect(JSON.parse(observation.metadata['attributes'] ?? '{}')).toMatchObject(attributes);
    }
  });

  it('conversation id is also the trace session', () => {
    expect(mapOne({ attrs: { 'gen_ai.conversation.id': 'conv_1' } }).trace.sessionId).toBe('conv_1');
  });

  it('has a test for every row of the table, and a row for every test', () => {
    const doc = readFileSync(new URL('../../docs/otel-genai.md', import.meta.url), 'utf8');
    const table = doc.slice(doc.indexOf('## Mapping'), doc.indexOf('\n## ', doc.indexOf('## Mapping') + 1));
    const documented = table
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split(' | ')[0]!.slice(2).trim());
    expect(new Set(documented).size).toBe(documented.length);
    expect([...new Set(ROWS.map((r) => r.row))].sort()).toEqual([...documented].sort());
  });
});
