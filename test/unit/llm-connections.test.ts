import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildCall, readAnswer } from '../../server/features/llm-connections/adapters.ts';
import {
  baseUrlProblem,
  isBlockedAddress,
  refusalOf,
} from '../../server/features/llm-connections/address-policy.ts';
import { decryptSecret, encryptSecret, maskSecret } from '../../server/features/llm-connections/secrets.ts';
import { loadConfig } from '../../server/kernel/config/env.ts';

describe('connection secrets', () => {
  const key = randomBytes(32);
  it('round-trip under the key, differ on every encryption, and fail under another key or when altered', () => {
    const a = encryptSecret(key, 'sk-secret-1234');
    expect(a).not.toContain('sk-secret');
    expect(encryptSecret(key, 'sk-secret-1234')).not.toBe(a);
    expect(decryptSecret(key, a)).toBe('sk-secret-1234');
    expect(() => decryptSecret(randomBytes(32), a)).toThrow();
    const [iv, data, tag] = a.split(':');
    const flipped = `${iv}:${data!.slice(0, -2)}${data!.endsWith('00') ? '01' : '00'}:${tag}`;
    expect(() => decryptSecret(key, flipped)).toThrow();
  });
  it.each([
    ['sk-abcdefgh1234', '...1234'],
    ['short', '...'],
  ])('mask %s as %s', (secret, masked) => expect(maskSecret(secret)).toBe(masked));
});

describe('address policy', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.20.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['::1', true],
    ['fd00:ec2::254', true],
    ['fe80::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.1', true],
    ['8.8.8.8', false],
    ['2606:4700::1111', false],
    ['::ffff:8.8.8.8', false],
  ])('%s blocked: %s', (ip, blocked) => expect(isBlockedAddress(ip)).toBe(blocked));

  const none = { whitelistedHosts: [], whitelistedIps: [] };
  it('refuses private addresses and metadata hosts, naming them; whitelists lift the refusal', () => {
    expect(refusalOf(none, 'judge.local', '127.0.0.1')).toMatch(/judge.local resolves to 127.0.0.1/);
    expect(refusalOf(none, 'metadata.google.internal', '8.8.8.8')).toMatch(/metadata/);
    expect(refusalOf({ ...none, whitelistedIps: ['127.0.0.1'] }, 'localhost', '127.0.0.1')).toBeUndefined();
    expect(refusalOf({ ...none, whitelistedIps: ['127.0.0.1'] }, 'x', '127.0.0.2')).toBeDefined();
    expect(
      refusalOf({ ...none, whitelistedHosts: ['judge.local'] }, 'JUDGE.local', '10.0.0.1'),
    ).toBeUndefined();
    expect(refusalOf(none, 'api.openai.com', '104.18.7.192')).toBeUndefined();
  });
  it.each([
    ['https://api.openai.com/v1', undefined],
    ['ftp://x/v1', 'baseURL: must use http or https'],
    ['http://user:pw@x/v1', 'baseURL: must not carry credentials'],
    ['not a url', 'baseURL: not a valid URL'],
  ])('base URL %s', (url, problem) => expect(baseUrlProblem(url)).toBe(problem));
});

describe('configuration', () => {
  const base = { DATABASE_URL: 'postgres://x', CLICKHOUSE_URL: 'http://x' };
  it('parses the encryption key and the whitelists', () => {
    const c = loadConfig({
      ...base,
      ENCRYPTION_KEY: 'ab'.repeat(32),
      SERVICE_LLM_CONNECTION_WHITELISTED_HOST: 'Judge.local, other',
      SERVICE_LLM_CONNECTION_WHITELISTED_IPS: '127.0.0.1,::1',
    });
    expect(c.llm.encryptionKey?.length).toBe(32);
    expect(c.llm.whitelistedHosts).toEqual(['judge.local', 'other']);
    expect(c.llm.whitelistedIps).toEqual(['127.0.0.1', '::1']);
    expect(loadConfig(base).llm.encryptionKey).toBeUndefined();
  });
  it.each([
    [{ ENCRYPTION_KEY: 'abc' }, /ENCRYPTION_KEY must be 64 hex characters/],
    [{ SERVICE_LLM_CONNECTION_WHITELISTED_IPS: '127.0.0.1,localhost' }, /not IP addresses: localhost/],
  ])('refuses %o', (env, message) => expect(() => loadConfig({ ...base, ...env })).toThrow(message));
});

describe('adapters', () => {
  const req = { model: 'm', system: 's', user: 'u', schema: { type: 'object' }, maxTokens: 64 };
  it('openai: chat completions with a JSON-schema response format, the key as bearer', () => {
    const call = buildCall('openai', 'http://127.0.0.1:9/v1/', 'sk-1', { 'x-team': 't' }, req);
    expect(call.url.href).toBe('http://127.0.0.1:9/v1/chat/completions');
    expect(call.headers).toEqual({ 'x-team': 't', authorization: 'Bearer sk-1' });
    expect(call.body).toMatchObject({
      model: 'm',
      max_tokens: 64,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'judgment', strict: true, schema: { type: 'object' } },
      },
    });
  });
  it('anthropic: messages with one forced tool whose input is the answer', () => {
    const call = buildCall('anthropic', null, 'sk-2', {}, req);
    expect(call.url.href).toBe('https://api.anthropic.com/v1/messages');
    expect(call.headers['x-api-key']).toBe('sk-2');
    expect(call.body).toMatchObject({ tool_choice: { type: 'tool', name: 'judgment' }, system: 's' });
  });
  it.each([
    [
      'openai',
      200,
      { choices: [{ message: { content: '{"score":1}' } }] },
      { ok: true, value: { score: 1 } },
    ],
    [
      'openai',
      200,
      { choices: [{ message: { content: '{"sco' }, finish_reason: 'length' }] },
      { ok: false, retryable: true },
    ],
    ['openai', 503, {}, { ok: false, retryable: true }],
    ['openai', 401, {}, { ok: false, retryable: false }],
    [
      'anthropic',
      200,
      { content: [{ type: 'tool_use', input: { score: 0 } }] },
      { ok: true, value: { score: 0 } },
    ],
    ['anthropic', 200, { content: [{ type: 'text', text: 'hi' }] }, { ok: false, retryable: true }],
  ] as const)('%s %i answer', (adapter, status, body, expected) => {
    expect(readAnswer(adapter, status, body, JSON.stringify(body))).toMatchObject(expected);
  });
});
