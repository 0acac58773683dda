import { describe, expect, it } from 'vitest';
import { buildCompletionCall, readCompletion } from '../../server/features/llm-connections/adapters.ts';
import {
  messagesOf,
  playgroundRequest,
  protectedLabelProblem,
} from '../../server/features/prompts/playground.ts';

describe('completion calls', () => {
  const req = {
    model: 'm',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ],
    maxTokens: 64,
    temperature: 0.5,
  };
  it('openai: chat completions with the messages as given, bearer key and extra headers', () => {
    const call = buildCompletionCall(
      {
        adapter: 'openai',
        baseURL: 'http://127.0.0.1:9/v1/',
        secretKey: 'sk-1',
        extraHeaders: { 'x-t': 'a' },
      },
      req,
    );
    expect(call.url.href).toBe('http://127.0.0.1:9/v1/chat/completions');
    expect(call.headers).toEqual({ 'x-t': 'a', authorization: 'Bearer sk-1' });
    expect(call.body).toEqual({ model: 'm', max_tokens: 64, temperature: 0.5, messages: req.messages });
  });
  it('anthropic: system messages apart, the conversation as messages', () => {
    const call = buildCompletionCall(
      { adapter: 'anthropic', baseURL: null, secretKey: 'sk-2', extraHeaders: {} },
      req,
    );
    expect(call.url.href).toBe('https://api.anthropic.com/v1/messages');
    expect(call.body).toEqual({
      model: 'm',
      max_tokens: 64,
      temperature: 0.5,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
    });
  });
  it.each([
    [
      'openai',
      200,
      { choices: [{ message: { content: 'Hello' } }], usage: { prompt_tokens: 5, completion_tokens: 2 } },
      { ok: true, text: 'Hello', usage: { input: 5, output: 2 } },
    ],
    [
      'anthropic',
      200,
      {
        content: [
          { type: 'text', text: 'He' },
          { type: 'text', text: 'llo' },
        ],
        usage: { input_tokens: 3, output_tokens: 1 },
      },
      { ok: true, text: 'Hello', usage: { input: 3, output: 1 } },
    ],
    ['openai', 200, { choices: [] }, { ok: false, reason: 'provider answered without content' }],
    ['anthropic', 200, { content: [] }, { ok: false, reason: 'provider answered without text' }],
    ['openai', 401, {}, { ok: false, reason: 'provider answered 401: denied' }],
  ] as const)('reads %s %i', (adapter, status, body, expected) => {
    expect(readCompletion(adapter, status, body, 'denied')).toEqual(expected);
  });
});

describe('playground rules', () => {
  it('fills variables; a text prompt is one user message; placeholders take their messages', () => {
    expect(messagesOf('Hi {{name}}, {{missing}}', { name: 'Ada' }, {})).toEqual([
      { role: 'user', content: 'Hi Ada, {{missing}}' },
    ]);
    expect(
      messagesOf(
        [
          { role: 'system', content: 'You are {{who}}.' },
          { type: 'placeholder', name: 'history' },
          { role: 'user', content: '{{q}}' },
        ],
        { who: 'terse', q: 'Why?' },
        { history: [{ role: 'assistant', content: 'Earlier' }] },
      ),
    ).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'assistant', content: 'Earlier' },
      { role: 'user', content: 'Why?' },
    ]);
    expect(() => messagesOf([{ type: 'placeholder', name: 'h' }], {}, {})).toThrow(
      "placeholders.h: the prompt's placeholder has no messages",
    );
  });

  it.each([
    [{ provider: 'p', model: 'm', type: 'text', prompt: 'x' }, true],
    [{ provider: 'p', model: 'm', type: 'chat', prompt: [{ role: 'user', content: 'x' }] }, true],
    [{ provider: 'p', model: 'm', type: 'chat', prompt: 'x' }, false],
    [{ provider: 'p', model: 'm', type: 'text', prompt: 'x', maxTokens: 0 }, false],
    [{ provider: '', model: 'm', type: 'text', prompt: 'x' }, false],
  ])('request %j valid: %s', (body, valid) => {
    expect(playgroundRequest.safeParse(body).success).toBe(valid);
  });

  it.each([
    ['owner', ['production'], undefined],
    ['member', ['staging'], undefined],
    ['member', ['staging', 'production'], 'only owners may set the protected "production" label'],
    ['viewer', ['production'], 'only owners may set the protected "production" label'],
  ] as const)('%s setting %j', (role, labels, problem) => {
    expect(protectedLabelProblem(role, labels)).toBe(problem);
  });
});
