import { describe, expect, it } from 'vitest';
import { decodeTraceExport } from '../../server/features/otel/decode.ts';
import { mapExport } from '../../server/features/otel/map-spans.ts';
import type { OtelObservation } from '../../server/features/otel/types.ts';
import { mapOne, SPAN, type SpanSpec, START, TRACE } from './otel-span.ts';

interface Row {
  rule: string;
  span: SpanSpec;
  /** Each listed field must equal exactly. */
  expected: Partial<OtelObservation>;
}

function runTable(rows: Row[]) {
  it.each(rows)('$rule', ({ span, expected }) => {
    const observation = mapOne(span);
    for (const [field, value] of Object.entries(expected)) {
      expect(observation[field as keyof OtelObservation], field).toEqual(value);
    }
  });
}

const LANGFUSE_SCOPE = { name: 'langfuse-sdk', version: '5.11.1' };

describe('observation type mappers (priority order)', () => {
  runTable([
    { rule: 'default is SPAN', span: {}, expected: { type: 'SPAN' } },
    ...(
      [
        ['span', 'SPAN'],
        ['generation', 'GENERATION'],
        ['event', 'EVENT'],
        ['agent', 'AGENT'],
        ['tool', 'TOOL'],
        ['chain', 'CHAIN'],
        ['retriever', 'RETRIEVER'],
        ['evaluator', 'EVALUATOR'],
        ['embedding', 'EMBEDDING'],
        ['guardrail', 'GUARDRAIL'],
        ['AGENT', 'AGENT'],
      ] as const
    ).map(([value, type]) => ({
      rule: `langfuse.observation.type=${value} → ${type}`,
      span: { attrs: { 'langfuse.observation.type': value } },
      expected: { type },
    })),
    {
      rule: 'unknown langfuse type falls through',
      span: { attrs: { 'langfuse.observation.type': 'blob' } },
      expected: { type: 'SPAN' },
    },
    {
      rule: 'OpenInference LLM → GENERATION',
      span: { attrs: { 'openinference.span.kind': 'LLM' } },
      expected: { type: 'GENERATION' },
    },
    {
      rule: 'OpenInference RETRIEVER',
      span: { attrs: { 'openinference.span.kind': 'RETRIEVER' } },
      expected: { type: 'RETRIEVER' },
    },
    {
      rule: 'OpenInference CHAIN',
      span: { attrs: { 'openinference.span.kind': 'CHAIN' } },
      expected: { type: 'CHAIN' },
    },
    {
      rule: 'langfuse type outranks OpenInference',
      span: { attrs: { 'langfuse.observation.type': 'span', 'openinference.span.kind': 'LLM' } },
      expected: { type: 'SPAN' },
    },
    {
      rule: 'gen_ai.operation.name chat',
      span: { attrs: { 'gen_ai.operation.name': 'chat' } },
      expected: { type: 'GENERATION' },
    },
    {
      rule: 'gen_ai.operation.name text_completion',
      span: { attrs: { 'gen_ai.operation.name': 'text_completion' } },
      expected: { type: 'GENERATION' },
    },
    {
      rule: 'gen_ai.operation.name embeddings',
      span: { attrs: { 'gen_ai.operation.name': 'embeddings' } },
      expected: { type: 'EMBEDDING' },
    },
    {
      rule: 'gen_ai.operation.name invoke_agent',
      span: { attrs: { 'gen_ai.operation.name': 'invoke_agent' } },
      expected: { type: 'AGENT' },
    },
    {
      rule: 'gen_ai.operation.name execute_tool',
      span: { attrs: { 'gen_ai.operation.name': 'execute_tool' } },
      expected: { type: 'TOOL' },
    },
    {
      rule: 'Vercel doGenerate with a model → GENERATION',
      span: { attrs: { 'operation.name': 'ai.generateText.doGenerate my-fn', 'ai.model.id': 'gpt-4o' } },
      expected: { type: 'GENERATION' },
    },
    {
      rule: 'Vercel doGenerate without a model stays SPAN',
      span: { attrs: { 'operation.name': 'ai.generateText.doGenerate' } },
      expected: { type: 'SPAN' },
    },
    {
      rule: 'Vercel embed with a model → EMBEDDING',
      span: { attrs: { 'ai.operationId': 'ai.embed.doEmbed', 'ai.model.id': 'text-embedding-3' } },
      expected: { type: 'EMBEDDING' },
    },
    {
      rule: 'Vercel tool call → TOOL',
      span: { attrs: { 'ai.operationId': 'ai.toolCall' } },
      expected: { type: 'TOOL' },
    },
    {
      rule: 'gen_ai.tool.name → TOOL',
      span: { attrs: { 'gen_ai.tool.name': 'search' } },
      expected: { type: 'TOOL' },
    },
    {
      rule: 'gen_ai.tool.call.id → TOOL',
      span: { attrs: { 'gen_ai.tool.call.id': 'call_1' } },
      expected: { type: 'TOOL' },
    },
    {
      rule: 'LiveKit function_tool → TOOL',
      span: { name: 'function_tool', scope: { name: 'livekit-agents' } },
      expected: { type: 'TOOL' },
    },
    {
      rule: 'LiveKit agent_turn → AGENT',
      span: { name: 'agent_turn', scope: { name: 'livekit-agents' } },
      expected: { type: 'AGENT' },
    },
    {
      rule: 'a named model means GENERATION',
      span: { attrs: { 'llm.model_name': 'claude' } },
      expected: { type: 'GENERATION' },
    },
    {
      rule: 'Python SDK ≤ 3.3 span with generation attributes → GENERATION',
      span: {
        scope: { name: 'langfuse-sdk', version: '3.2.1' },
        resource: { 'telemetry.sdk.language': 'python' },
        attrs: { 'langfuse.observation.type': 'span', 'langfuse.observation.usage_details': '{"input":1}' },
      },
      expected: { type: 'GENERATION' },
    },
    {
      rule: 'Python SDK 3.4 span stays SPAN',
      span: {
        scope: { name: 'langfuse-sdk', version: '3.4.0' },
        resource: { 'telemetry.sdk.language': 'python' },
        attrs: { 'langfuse.observation.type': 'span', 'langfuse.observation.model.name': 'gpt-4o' },
      },
      expected: { type: 'SPAN' },
    },
  ]);
});

describe('name', () => {
  runTable([
    { rule: 'span name by default', span: { name: 'handler' }, expected: { name: 'handler' } },
    {
      rule: 'gen_ai.tool.name',
      span: { name: 'x', attrs: { 'gen_ai.tool.name': 'weather' } },
      expected: { name: 'weather' },
    },
    {
      rule: 'logfire.msg',
      span: { name: 'x', attrs: { 'logfire.msg': 'running agent' } },
      expected: { name: 'running agent' },
    },
    {
      rule: 'ai.toolCall.name',
      span: { name: 'x', attrs: { 'ai.toolCall.name': 'lookup' } },
      expected: { name: 'lookup' },
    },
    {
      rule: 'Vercel functionId:operationId',
      span: {
        name: 'x',
        attrs: { 'ai.telemetry.functionId': 'chat-fn', 'ai.operationId': 'ai.generateText' },
      },
      expected: { name: 'chat-fn:ai.generateText' },
    },
  ]);
});

describe('level and status message', () => {
  runTable([
    ...(
      [
        ['DEBUG', 'DEBUG'],
        ['trace', 'DEBUG'],
        ['VERBOSE', 'DEBUG'],
        ['info', 'DEFAULT'],
        ['OK', 'DEFAULT'],
        ['DEFAULT', 'DEFAULT'],
        ['warn', 'WARNING'],
        ['WARNING', 'WARNING'],
        ['error', 'ERROR'],
        ['FATAL', 'ERROR'],
        ['critical', 'ERROR'],
      ] as const
    ).map(([value, level]) => ({
      rule: `level alias ${value} → ${level}`,
      span: { attrs: { 'langfuse.observation.level': value } },
      expected: { level },
    })),
    {
      rule: 'error status → ERROR',
      span: { status: { code: 2, message: 'failed' } },
      expected: { level: 'ERROR', statusMessage: 'failed' },
    },
    {
      rule: 'ok status → DEFAULT',
      span: { status: { code: 1 } },
      expected: { level: 'DEFAULT', statusMessage: null },
    },
    {
      rule: 'explicit level beats error status',
      span: { attrs: { 'langfuse.observation.level': 'DEBUG' }, status: { code: 2 } },
      expected: { level: 'DEBUG' },
    },
    {
      rule: 'unknown level spelling falls back to status',
      span: { attrs: { 'langfuse.observation.level': 'loud' }, status: { code: 2 } },
      expected: { level: 'ERROR' },
    },
    {
      rule: 'LiveKit pipeline span → DEBUG',
      span: { name: 'tts_node', scope: { name: 'livekit-agents' } },
      expected: { level: 'DEBUG' },
    },
    {
      rule: 'status_message attribute beats span status',
      span: {
        attrs: { 'langfuse.observation.status_message': 'mine' },
        status: { code: 2, message: 'theirs' },
      },
      expected: { statusMessage: 'mine' },
    },
  ]);
});

describe('environment', () => {
  runTable([
    { rule: 'absent → default', span: {}, expected: { environment: 'default' } },
    {
      rule: 'langfuse.environment, lowercased',
      span: { attrs: { 'langfuse.environment': 'Production' } },
      expected: { environment: 'production' },
    },
    {
      rule: 'langfuse- prefix stripped',
      span: { attrs: { 'langfuse.environment': 'langfuse-prod' } },
      expected: { environment: 'prod' },
    },
    {
      rule: 'langfuse_ prefix stripped',
      span: { attrs: { 'langfuse.environment': 'langfuse_eval' } },
      expected: { environment: 'eval' },
    },
    {
      rule: 'resource deployment.environment.name',
      span: { resource: { 'deployment.environment.name': 'staging' } },
      expected: { environment: 'staging' },
    },
    {
      rule: 'legacy deployment.environment',
      span: { attrs: { 'deployment.environment': 'dev' } },
      expected: { environment: 'dev' },
    },
    {
      rule: 'key order first, then span before resource',
      span: {
        attrs: { 'deployment.environment.name': 'span-env' },
        resource: { 'langfuse.environment': 'resource-env' },
      },
      expected: { environment: 'resource-env' },
    },
    {
      rule: 'span wins for the same key',
      span: {
        attrs: { 'langfuse.environment': 'span-env' },
        resource: { 'langfuse.environment': 'resource-env' },
      },
      expected: { environment: 'span-env' },
    },
    {
      rule: 'invalid characters → default',
      span: { attrs: { 'langfuse.environment': 'my env' } },
      expected: { environment: 'default' },
    },
    {
      rule: 'longer than 40 → default',
      span: { attrs: { 'langfuse.environment': 'e'.repeat(41) } },
      expected: { environment: 'default' },
    },
    {
      rule: 'exactly 40 is fine',
      span: { attrs: { 'langfuse.environment': 'e'.repeat(40) } },
      expected: { environment: 'e'.repeat(40) },
    },
  ]);
});

describe('user, session, tags, public, trace name', () => {
  runTable([
    {
      rule: 'langfuse.user.id beats user.id',
      span: { attrs: { 'user.id': 'b', 'langfuse.user.id': 'a' } },
      expected: { userId: 'a' },
    },
    { rule: 'user.id', span: { attrs: { 'user.id': 'u1' } }, expected: { userId: 'u1' } },
    {
      rule: 'metadata langfuse_user_id (LangChain/OpenAI integrations)',
      span: { attrs: { 'langfuse.observation.metadata.langfuse_user_id': 'u2' } },
      expected: { userId: 'u2' },
    },
    {
      rule: 'Vercel userId metadata',
      span: { attrs: { 'ai.telemetry.metadata.userId': 'u3' } },
      expected: { userId: 'u3' },
    },
    { rule: 'numeric user id as text', span: { attrs: { 'user.id': 7 } }, expected: { userId: '7' } },
    { rule: 'session.id', span: { attrs: { 'session.id': 's1' } }, expected: { sessionId: 's1' } },
    {
      rule: 'gen_ai.conversation.id',
      span: { attrs: { 'gen_ai.conversation.id': 'c1' } },
      expected: { sessionId: 'c1' },
    },
    {
      rule: 'langfuse.session.id beats the rest',
      span: { attrs: { 'gen_ai.conversation.id': 'c1', 'langfuse.session.id': 's0' } },
      expected: { sessionId: 's0' },
    },
    {
      rule: 'Vercel sessionId metadata',
      span: { attrs: { 'ai.telemetry.metadata.sessionId': 's2' } },
      expected: { sessionId: 's2' },
    },
    { rule: 'no tags', span: {}, expected: { tags: [] } },
    {
      rule: 'tags as array',
      span: { attrs: { 'langfuse.trace.tags': ['a', 'b'] } },
      expected: { tags: ['a', 'b'] },
    },
    {
      rule: 'tags as JSON array string',
      span: { attrs: { 'langfuse.trace.tags': '["x", "y"]' } },
      expected: { tags: ['x', 'y'] },
    },
    {
      rule: 'tags as comma list',
      span: { attrs: { 'langfuse.tags': 'one, two ,three' } },
      expected: { tags: ['one', 'two', 'three'] },
    },
    { rule: 'single tag', span: { attrs: { 'tag.tags': 'solo' } }, expected: { tags: ['solo'] } },
    {
      rule: 'Vercel tags',
      span: { attrs: { 'ai.telemetry.metadata.tags': ['v'] } },
      expected: { tags: ['v'] },
    },
    {
      rule: 'langfuse.trace.tags outranks tag.tags',
      span: { attrs: { 'tag.tags': 'low', 'langfuse.trace.tags': ['high'] } },
      expected: { tags: ['high'] },
    },
    { rule: 'public not sent → null', span: {}, expected: { public: null } },
    { rule: 'public true', span: { attrs: { 'langfuse.trace.public': true } }, expected: { public: true } },
    { rule: 'public "true"', span: { attrs: { 'langfuse.public': 'true' } }, expected: { public: true } },
    {
      rule: 'public false',
      span: { attrs: { 'langfuse.trace.public': false } },
      expected: { public: false },
    },
    {
      rule: 'trace name',
      span: { attrs: { 'langfuse.trace.name': 'checkout' } },
      expected: { traceName: 'checkout' },
    },
  ]);
});

describe('version, release, internal flags', () => {
  runTable([
    { rule: 'langfuse.version', span: { attrs: { 'langfuse.version': 'v2' } }, expected: { version: 'v2' } },
    {
      rule: 'resource service.version fallback',
      span: { resource: { 'service.version': '1.4.0' } },
      expected: { version: '1.4.0' },
    },
    {
      rule: 'span version beats service.version',
      span: { attrs: { 'langfuse.version': 'v2' }, resource: { 'service.version': '1.4.0' } },
      expected: { version: 'v2' },
    },
    { rule: 'release from span', span: { attrs: { 'langfuse.release': 'r1' } }, expected: { release: 'r1' } },
    {
      rule: 'release from resource',
      span: { resource: { 'langfuse.release': 'r0' } },
      expected: { release: 'r0' },
    },
    { rule: 'no flags', span: {}, expected: { isAppRoot: false, asRoot: false } },
    {
      rule: 'is_app_root and as_root',
      span: {
        attrs: { 'langfuse.internal.is_app_root': true, 'langfuse.internal.as_root': 'true' },
        parent: SPAN.replace('e', 'f'),
      },
      expected: { isAppRoot: true, asRoot: true, parentSpanId: SPAN.replace('e', 'f') },
    },
  ]);
});

describe('input and output', () => {
  runTable([
    {
      rule: 'Langfuse observation input/output (strings kept)',
      span: { attrs: { 'langfuse.observation.input': '{"q":1}', 'langfuse.observation.output': 'plain' } },
      expected: { input: '{"q":1}', output: 'plain' },
    },
    {
      rule: 'non-string values are JSON-encoded',
      span: { attrs: { 'langfuse.observation.input': { a: [1, 2] }, 'langfuse.observation.output': 3 } },
      expected: { input: '{"a":[1,2]}', output: '3' },
    },
    {
      rule: 'Langfuse wins over frameworks',
      span: { attrs: { 'langfuse.observation.input': 'lf', 'input.value': 'oi' } },
      expected: { input: 'lf', output: null },
    },
    {
      rule: 'OpenInference input.value/output.value',
      span: { attrs: { 'input.value': 'question', 'output.value': 'answer' } },
      expected: { input: 'question', output: 'answer' },
    },
    {
      rule: 'Traceloop entity',
      span: { attrs: { 'traceloop.entity.input': '{"x":1}', 'traceloop.entity.output': '{"y":2}' } },
      expected: { input: '{"x":1}', output: '{"y":2}' },
    },
    {
      rule: 'OpenLLMetry gen_ai.prompt.N.* rebuilt as messages',
      span: {
        attrs: {
          'gen_ai.prompt.0.role': 'user',
          'gen_ai.prompt.0.content': 'hi',
          'gen_ai.completion.0.role': 'assistant',
          'gen_ai.completion.0.content': 'hello',
        },
      },
      expected: {
        input: '[{"role":"user","content":"hi"}]',
        output: '[{"role":"assistant","content":"hello"}]',
      },
    },
    {
      rule: 'OpenInference llm.input_messages nested',
      span: {
        attrs: {
          'llm.input_messages.0.message.role': 'user',
          'llm.input_messages.0.message.content': 'q',
          'llm.output_messages.0.message.content': 'a',
        },
      },
      expected: {
        input: '[{"message":{"role":"user","content":"q"}}]',
        output: '[{"message":{"content":"a"}}]',
      },
    },
    {
      rule: 'GenAI messages with system instructions prepended',
      span: {
        attrs: {
          'gen_ai.input.messages': '[{"role":"user","content":"2+2?"}]',
          'gen_ai.output.messages': '[{"role":"assistant","content":"4"}]',
          'gen_ai.system_instructions': '[{"type":"text","content":"Be brief."}]',
        },
      },
      expected: {
        input: '[{"role":"system","content":"Be brief."},{"role":"user","content":"2+2?"}]',
        output: '[{"role":"assistant","content":"4"}]',
      },
    },
    {
      rule: 'GenAI span events',
      span: {
        events: [
          { name: 'gen_ai.system.message', attrs: { content: 'sys' } },
          { name: 'gen_ai.user.message', attrs: { content: 'hi' } },
          { name: 'gen_ai.choice', attrs: { index: 0, message: '{"content":"yo"}' } },
        ],
      },
      expected: {
        input: '[{"role":"system","content":"sys"},{"role":"user","content":"hi"}]',
        output: '{"index":0,"message":"{\\"content\\":\\"yo\\"}"}',
      },
    },
    {
      rule: 'GenAI tool call arguments/result',
      span: {
        attrs: { 'gen_ai.tool.call.arguments': '{"city":"Paris"}', 'gen_ai.tool.call.result': 'sunny' },
      },
      expected: { input: '{"city":"Paris"}', output: 'sunny' },
    },
    {
      rule: 'Vercel prompt messages and response text (scope ai)',
      span: {
        scope: { name: 'ai' },
        attrs: { 'ai.prompt.messages': '[{"role":"user","content":"q"}]', 'ai.response.text': 'a' },
      },
      expected: { input: '[{"role":"user","content":"q"}]', output: 'a' },
    },
    {
      rule: 'Vercel text plus tool calls becomes one assistant message',
      span: {
        scope: { name: 'ai' },
        attrs: { 'ai.prompt': 'q', 'ai.response.text': 'calling', 'ai.response.toolCalls': '[]' },
      },
      expected: { input: 'q', output: '{"role":"assistant","content":"calling","tool_calls":"[]"}' },
    },
    { rule: 'nothing found', span: { attrs: { unrelated: 1 } }, expected: { input: null, output: null } },
  ]);
});

describe('metadata', () => {
  it('merges JSON and dotted Langfuse metadata, dotted winning, with resource and scope always present', () => {
    const o = mapOne({
      scope: { name: 'langfuse-sdk', version: '5.11.1', attributes: { 'scope.attr': 'x' } },
      resource: { 'service.name': 'svc', 'langfuse.trace.metadata.region': 'eu' },
      attrs: {
        'langfuse.observation.metadata': '{"a":"json","b":"json","nested":{"deep":1}}',
        'langfuse.observation.metadata.b': 'dotted',
        'langfuse.trace.metadata.tenant': 't1',
        'langfuse.observation.input': 'in',
      },
    });
    expect(o.metadata).toEqual({
      a: 'json',
      b: 'dotted',
      nested: '{"deep":1}',
      tenant: 't1',
      region: 'eu',
      resourceAttributes: '{"service.name":"svc","langfuse.trace.metadata.region":"eu"}',
      scope: '{"name":"langfuse-sdk","version":"5.11.1","attributes":{"scope.attr":"x"}}',
    });
    expect(o.trace.metadata).toEqual({ tenant: 't1', region: 'eu' });
  });

  it('keeps span links with valid ids as metadata.links, attributes only when there are some', () => {
    const other = 'a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5';
    const o = mapOne({
      links: [
        { traceId: other.toUpperCase(), spanId: '00f067aa0ba902B7', attrs: { 'link.kind': 'caused-by' } },
        { traceId: other, spanId: '1111111111111111' },
        { traceId: 'not-hex', spanId: '1111111111111111' },
        { traceId: '00000000000000000000000000000000', spanId: '1111111111111111' },
      ],
    });
    expect(JSON.parse(o.metadata.links!)).toEqual([
      { traceId: other, spanId: '00f067aa0ba902b7', attributes: { 'link.kind': 'caused-by' } },
      { traceId: other, spanId: '1111111111111111' },
    ]);
    expect(mapOne({}).metadata).not.toHaveProperty('links');
  });

  it('keeps the remaining attributes of foreign scopes as metadata.attributes, minus input/output carriers', () => {
    const o = mapOne({
      attrs: { 'http.method': 'GET', 'retry.count': 2, 'input.value': 'q', 'gen_ai.prompt.0.content': 'p' },
    });
    expect(JSON.parse(o.metadata.attributes!)).toEqual({ 'http.method': 'GET', 'retry.count': '2' });
  });

  it('leaves metadata.attributes out for the Langfuse SDK scope', () => {
    expect(mapOne({ scope: LANGFUSE_SCOPE, attrs: { 'http.method': 'GET' } }).metadata).not.toHaveProperty(
      'attributes',
    );
  });

  it('takes Vercel ai.telemetry.metadata.* but not its trace fields', () => {
    const o = mapOne({
      scope: { name: 'ai' },
      attrs: { 'ai.telemetry.metadata.feature': 'search', 'ai.telemetry.metadata.userId': 'u' },
    });
    expect(o.metadata.feature).toBe('search');
    expect(o.metadata).not.toHaveProperty('userId');
    expect(o.userId).toBe('u');
  });

  it('treats keys named like Object.prototype members as ordinary keys', () => {
    const o = mapOne({
      scope: LANGFUSE_SCOPE,
      attrs: {
        'langfuse.observation.metadata': '{"__proto__":{"polluted":true}}',
        'langfuse.observation.metadata.constructor': 'c',
        'gen_ai.usage.constructor': 3,
        'gen_ai.usage.__proto__': 4,
      },
    });
    expect(Object.getOwnPropertyDescriptor(o.metadata, '__proto__')?.value).toBe('{"polluted":true}');
    expect(o.metadata.constructor).toBe('c');
    expect(Object.getPrototypeOf(o.metadata)).toBe(Object.prototype);
    expect(Object.entries(o.usageDetails)).toEqual([
      ['constructor', 3],
      ['__proto__', 4],
    ]);
  });

  it('drops metadata that is not a JSON object, as the reference does', () => {
    expect(
      mapOne({ scope: LANGFUSE_SCOPE, attrs: { 'langfuse.observation.metadata': 'not json' } }).metadata,
    ).toEqual({
      resourceAttributes: '{}',
      scope: '{"name":"langfuse-sdk","version":"5.11.1","attributes":{}}',
    });
  });
});

describe('model, parameters, usage, cost', () => {
  runTable([
    {
      rule: 'langfuse model name first',
      span: { attrs: { 'langfuse.observation.model.name': 'm1', 'gen_ai.response.model': 'm2' } },
      expected: { modelName: 'm1' },
    },
    {
      rule: 'response model before request model',
      span: { attrs: { 'gen_ai.request.model': 'gpt-4o', 'gen_ai.response.model': 'gpt-4o-2024-08-06' } },
      expected: { modelName: 'gpt-4o-2024-08-06' },
    },
    {
      rule: 'Vercel ai.model.id',
      span: { attrs: { 'ai.model.id': 'claude-3' } },
      expected: { modelName: 'claude-3' },
    },
    {
      rule: 'OpenInference llm.model_name',
      span: { attrs: { 'llm.model_name': 'mistral' } },
      expected: { modelName: 'mistral' },
    },
    {
      rule: 'langfuse model parameters JSON, values as strings',
      span: {
        attrs: {
          'langfuse.observation.model.parameters':
            '{"temperature":0.2,"stop":["x"],"stream":true,"seed":null}',
        },
      },
      expected: { modelParameters: { temperature: '0.2', stop: '["x"]', stream: 'true' } },
    },
    {
      rule: 'gen_ai.request.* except model',
      span: {
        attrs: {
          'gen_ai.request.model': 'm',
          'gen_ai.request.temperature': 0.5,
          'gen_ai.request.max_tokens': 100,
        },
      },
      expected: { modelParameters: { temperature: '0.5', max_tokens: '100' } },
    },
    {
      rule: 'OpenInference llm.invocation_parameters JSON',
      span: { attrs: { 'llm.invocation_parameters': '{"top_p":0.9}', 'gen_ai.request.temperature': 0.5 } },
      expected: { modelParameters: { top_p: '0.9' } },
    },
    {
      rule: 'Vercel settings (scope ai)',
      span: {
        scope: { name: 'ai' },
        attrs: { 'ai.settings.maxRetries': 2, 'gen_ai.request.temperature': 0.1 },
      },
      expected: { modelParameters: { maxRetries: '2', temperature: '0.1' } },
    },
    {
      rule: 'usage: langfuse JSON flat map',
      span: {
        attrs: {
          'langfuse.observation.usage_details': '{"input":10,"output":5,"total":15,"input_cached_tokens":2}',
        },
      },
      expected: { usageDetails: { input: 10, output: 5, total: 15, input_cached_tokens: 2 } },
    },
    {
      rule: 'usage: OpenAI chat-completions object, details subtracted',
      span: {
        attrs: {
          'langfuse.observation.usage_details': JSON.stringify({
            prompt_tokens: 100,
            completion_tokens: 50,
            total_tokens: 150,
            prompt_tokens_details: { cached_tokens: 40, audio_tokens: null },
            completion_tokens_details: { reasoning_tokens: 20 },
          }),
        },
      },
      expected: {
        usageDetails: {
          input: 60,
          output: 30,
          total: 150,
          input_cached_tokens: 40,
          output_reasoning_tokens: 20,
        },
      },
    },
    {
      rule: 'usage: OpenAI responses object',
      span: {
        attrs: {
          'langfuse.observation.usage_details': JSON.stringify({
            input_tokens: 30,
            output_tokens: 10,
            total_tokens: 40,
            input_tokens_details: { cached_tokens: 5 },
          }),
        },
      },
      expected: { usageDetails: { input: 25, output: 10, total: 40, input_cached_tokens: 5 } },
    },
    {
      rule: 'usage: entries that are no number dropped one by one',
      span: {
        attrs: { 'langfuse.observation.usage_details': '{"input":3,"total":"x","extra":"7"}' },
      },
      expected: { usageDetails: { input: 3, extra: 7 } },
    },
    {
      rule: 'usage: gen_ai.usage input/output tokens',
      span: {
        attrs: { 'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 4, 'gen_ai.usage.cost': 0.5 },
      },
      expected: { usageDetails: { input: 12, output: 4 } },
    },
    {
      rule: 'usage: gen_ai.usage prompt/completion tokens',
      span: {
        attrs: {
          'gen_ai.usage.prompt_tokens': 7,
          'gen_ai.usage.completion_tokens': 3,
          'gen_ai.usage.total_tokens': 10,
        },
      },
      expected: { usageDetails: { input: 7, output: 3, total: 10 } },
    },
    {
      rule: 'usage: OpenInference llm.token_count',
      span: {
        attrs: { 'llm.token_count.prompt': 8, 'llm.token_count.completion': 2, 'llm.token_count.total': 10 },
      },
      expected: { usageDetails: { input: 8, output: 2, total: 10 } },
    },
    {
      rule: 'usage: Vercel, cached and reasoning tokens subtracted',
      span: {
        scope: { name: 'ai' },
        attrs: {
          'gen_ai.usage.input_tokens': 100,
          'gen_ai.usage.output_tokens': 40,
          'ai.usage.tokens': 140,
          'ai.usage.cachedInputTokens': 30,
          'ai.usage.reasoningTokens': 10,
        },
      },
      expected: {
        usageDetails: {
          input: 70,
          output: 30,
          total: 140,
          input_cached_tokens: 30,
          output_reasoning_tokens: 10,
        },
      },
    },
    {
      rule: 'cost: langfuse JSON',
      span: {
        attrs: { 'langfuse.observation.cost_details': '{"input":0.001,"output":0.002,"total":0.003}' },
      },
      expected: { costDetails: { input: 0.001, output: 0.002, total: 0.003 } },
    },
    {
      rule: 'cost: gen_ai.usage.cost → total',
      span: { attrs: { 'gen_ai.usage.cost': 0.42 } },
      expected: { costDetails: { total: 0.42 } },
    },
    {
      rule: 'cost: llm.cost.total → total',
      span: { attrs: { 'llm.cost.total': 0.1 } },
      expected: { costDetails: { total: 0.1 } },
    },
    {
      rule: 'no usage or cost',
      span: {},
      expected: { usageDetails: {}, costDetails: {}, modelParameters: {}, modelName: null },
    },
  ]);
});

describe('refused values', () => {
  it.each([
    [
      'langfuse.observation.usage_details',
      '{"input":3,"output":-1}',
      'langfuse.observation.usage_details.output',
    ],
    ['langfuse.observation.usage_details', '{"input":"NaN"}', 'langfuse.observation.usage_details.input'],
    ['gen_ai.usage.input_tokens', -5, 'gen_ai.usage / llm.token_count.input'],
    ['llm.token_count.prompt', 'NaN', 'gen_ai.usage / llm.token_count.input'],
    ['langfuse.observation.cost_details', '{"total":-1}', 'langfuse.observation.cost_details.total'],
    ['gen_ai.usage.cost', -0.5, 'gen_ai.usage.cost'],
    // Beyond the store's columns: UInt64 counts read as JS numbers, Decimal(18, 12) costs.
    ['gen_ai.usage.input_tokens', '1e+21', 'gen_ai.usage / llm.token_count.input'],
    [
      'langfuse.observation.usage_details',
      '{"input":9007199254740992}',
      'langfuse.observation.usage_details.input',
    ],
    ['gen_ai.usage.cost', 1_000_000, 'gen_ai.usage.cost'],
    [
      'langfuse.observation.completion_start_time',
      '9999-12-31T00:00:00Z',
      'langfuse.observation.completion_start_time',
    ],
    [
      'langfuse.observation.completion_start_time',
      '2300-01-01T00:00:00Z',
      'langfuse.observation.completion_start_time',
    ],
  ])('%s = %s is refused, naming %s', (key, value, field) => {
    expect(() => mapOne({ attrs: { [key]: value } })).toThrow(field);
  });

  it('keeps a completion start time before 1970 exact', () => {
    expect(
      mapOne({ attrs: { 'langfuse.observation.completion_start_time': '1950-06-01T00:00:00.000001Z' } }),
    ).toMatchObject({ completionStartTime: '1950-06-01T00:00:00.000001Z' });
  });
});

describe('completion start time and timestamps', () => {
  runTable([
    {
      rule: 'span times with microseconds',
      span: { start: '1700000000123456789', end: '1700000001000000999' },
      expected: { startTime: '2023-11-14T22:13:20.123456Z', endTime: '2023-11-14T22:13:21.000000Z' },
    },
    { rule: 'missing end → start', span: { end: '0' }, expected: { endTime: '2023-11-14T22:13:20.123456Z' } },
    {
      rule: 'missing start → end',
      span: { start: '0' },
      expected: { startTime: '2023-11-14T22:13:21.000000Z' },
    },
    {
      rule: 'ISO completion start time with microseconds',
      span: { attrs: { 'langfuse.observation.completion_start_time': '2023-11-14T22:13:20.500001Z' } },
      expected: { completionStartTime: '2023-11-14T22:13:20.500001Z' },
    },
    {
      rule: 'double-encoded ISO (older SDKs)',
      span: { attrs: { 'langfuse.observation.completion_start_time': '"2023-11-14T22:13:20.5Z"' } },
      expected: { completionStartTime: '2023-11-14T22:13:20.500000Z' },
    },
    {
      rule: 'offset converted to UTC',
      span: { attrs: { 'langfuse.observation.completion_start_time': '2023-11-14T23:13:20.25+01:00' } },
      expected: { completionStartTime: '2023-11-14T22:13:20.250000Z' },
    },
    {
      rule: 'Vercel msToFirstChunk added to the start',
      span: { attrs: { 'ai.response.msToFirstChunk': 250.5 } },
      expected: { completionStartTime: '2023-11-14T22:13:20.373956Z' },
    },
    {
      rule: 'garbage → null',
      span: { attrs: { 'langfuse.observation.completion_start_time': 'soon' } },
      expected: { completionStartTime: null },
    },
    {
      rule: 'all-zero parent is a root',
      span: { parent: '0000000000000000' },
      expected: { parentSpanId: '' },
    },
  ]);
});

describe('prompt (GENERATION only)', () => {
  const promptAttrs = {
    'langfuse.observation.prompt.name': 'greeting',
    'langfuse.observation.prompt.version': 3,
  };
  runTable([
    {
      rule: 'generation keeps the prompt',
      span: { attrs: { 'langfuse.observation.type': 'generation', ...promptAttrs } },
      expected: { promptName: 'greeting', promptVersion: 3 },
    },
    {
      rule: 'span drops the prompt',
      span: { attrs: { 'langfuse.observation.type': 'span', ...promptAttrs } },
      expected: { promptName: null, promptVersion: null },
    },
    {
      rule: 'legacy langfuse.prompt.* names',
      span: {
        attrs: {
          'gen_ai.operation.name': 'chat',
          'langfuse.prompt.name': 'p',
          'langfuse.prompt.version': '2',
        },
      },
      expected: { promptName: 'p', promptVersion: 2 },
    },
    {
      rule: 'Vercel langfusePrompt metadata',
      span: {
        scope: { name: 'ai' },
        attrs: {
          'operation.name': 'ai.generateText.doGenerate',
          'ai.model.id': 'gpt-4o',
          'ai.telemetry.metadata.langfusePrompt': '{"name":"vp","version":5}',
        },
      },
      expected: { type: 'GENERATION', promptName: 'vp', promptVersion: 5 },
    },
    {
      rule: 'non-integer version → null',
      span: {
        attrs: { 'langfuse.observation.type': 'generation', 'langfuse.observation.prompt.version': 'latest' },
      },
      expected: { promptVersion: null },
    },
  ]);
});

describe('experiment', () => {
  runTable([
    { rule: 'no experiment attributes → null', span: {}, expected: { experiment: null } },
    {
      rule: 'all experiment attributes',
      span: {
        attrs: {
          'langfuse.experiment.id': 'exp-1',
          'langfuse.experiment.name': 'baseline',
          'langfuse.experiment.metadata': '{"model":"gpt-4o","cfg":{"t":1}}',
          'langfuse.experiment.description': 'first run',
          'langfuse.experiment.dataset.id': 'ds-1',
          'langfuse.experiment.item.id': 'item-1',
          'langfuse.experiment.item.version': '2024-05-01T10:00:00.123456Z',
          'langfuse.experiment.item.metadata': '{"source":"csv"}',
          'langfuse.experiment.item.root_observation_id': 'abc123',
          'langfuse.experiment.item.expected_output': '{"answer":42}',
        },
      },
      expected: {
        experiment: {
          id: 'exp-1',
          name: 'baseline',
          metadata: { model: 'gpt-4o', cfg: '{"t":1}' },
          description: 'first run',
          datasetId: 'ds-1',
          itemId: 'item-1',
          itemVersion: '2024-05-01T10:00:00.123456Z',
          itemMetadata: { source: 'csv' },
          itemRootObservationId: 'abc123',
          itemExpectedOutput: '{"answer":42}',
        },
      },
    },
    {
      rule: 'partial experiment',
      span: { attrs: { 'langfuse.experiment.item.id': 'i' } },
      expected: {
        experiment: {
          id: null,
          name: null,
          metadata: {},
          description: null,
          datasetId: null,
          itemId: 'i',
          itemVersion: null,
          itemMetadata: {},
          itemRootObservationId: null,
          itemExpectedOutput: null,
        },
      },
    },
  ]);
});

describe('trace-domain attributes', () => {
  it('collects langfuse.trace.* and the shared trace fields', () => {
    const o = mapOne({
      resource: { 'service.version': '9' },
      attrs: {
        'langfuse.trace.name': 'tn',
        'langfuse.trace.input': '{"in":1}',
        'langfuse.trace.output': { out: 2 },
        'langfuse.trace.metadata': '{"k":"v"}',
        'user.id': 'u',
        'session.id': 's',
        'langfuse.trace.tags': ['t'],
        'langfuse.trace.public': true,
        'langfuse.release': 'r',
      },
    });
    expect(o.trace).toEqual({
      name: 'tn',
      input: '{"in":1}',
      output: '{"out":2}',
      metadata: { k: 'v' },
      userId: 'u',
      sessionId: 's',
      tags: ['t'],
      public: true,
      version: '9',
      release: 'r',
    });
    expect(o.input).toBeNull(); // trace input is not the observation's input
  });
});

describe('instrumentation', () => {
  it('takes service, telemetry SDK and scope from the export and the SDK headers from the context', () => {
    const o = mapOne(
      {
        scope: { name: 'openinference.instrumentation.openai', version: '0.1.2' },
        resource: {
          'service.name': 'api',
          'service.version': '2.0.0',
          'telemetry.sdk.language': 'python',
          'telemetry.sdk.name': 'opentelemetry',
          'telemetry.sdk.version': '1.27.0',
        },
      },
      { sdkName: 'python', sdkVersion: '4.14.3' },
    );
    expect(o.instrumentation).toEqual({
      serviceName: 'api',
      serviceVersion: '2.0.0',
      scopeName: 'openinference.instrumentation.openai',
      scopeVersion: '0.1.2',
      sdkLanguage: 'python',
      sdkName: 'opentelemetry',
      sdkVersion: '1.27.0',
      ingestionSdkName: 'python',
      ingestionSdkVersion: '4.14.3',
    });
  });

  it('reports unknown SDK headers and null resource fields when absent', () => {
    expect(mapOne({ scope: { name: '', version: '' } }).instrumentation).toEqual({
      serviceName: null,
      serviceVersion: null,
      scopeName: null,
      scopeVersion: null,
      sdkLanguage: null,
      sdkName: null,
      sdkVersion: null,
      ingestionSdkName: 'unknown',
      ingestionSdkVersion: 'unknown',
    });
  });
});

describe('mapExport over a whole export', () => {
  it('maps every span of every resource and scope in order, and tolerates unvalidated junk', () => {
    const span = (id: string) => ({ traceId: TRACE, spanId: id, name: id, startTimeUnixNano: START });
    const request = decodeTraceExport(
      Buffer.from(
        JSON.stringify({
          resourceSpans: [
            {
              scopeSpans: [
                { spans: [span('0000000000000001'), span('0000000000000002')] },
                { spans: 'junk' },
              ],
            },
            null,
            { scopeSpans: [{ scope: { name: 'b' }, spans: [span('0000000000000003'), 7] }] },
          ],
        }),
      ),
      'application/json',
      undefined,
    );
    expect(mapExport(request).map((o) => o.spanId)).toEqual([
      '0000000000000001',
      '0000000000000002',
      '0000000000000003',
    ]);
  });

  it('uses ctx.now only for a span without timestamps', () => {
    const o = mapOne({ start: '0', end: '0' });
    expect(o.startTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    const request = decodeTraceExport(
      Buffer.from(
        JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: TRACE, spanId: SPAN }] }] }] }),
      ),
      'application/json',
      undefined,
    );
    const [fixed] = mapExport(request, { now: new Date('2024-01-02T03:04:05.678Z') });
    expect(fixed).toMatchObject({
      startTime: '2024-01-02T03:04:05.678000Z',
      endTime: '2024-01-02T03:04:05.678000Z',
    });
  });
});
