/**
 * Prompt composition against a real web on PostgreSQL and the analytics server, through the JS
 * SDK (`langfuse` v3, whose getPrompt reads the composed text): references by label and by version
 * resolved on read and nested, `resolve=false` keeping them, a moved label changing what a
 * composed prompt reads, and missing references and cycles refused with 400 naming them, on create,
 * on a label move, and on a read after the referenced prompt was deleted.
 */
import { Langfuse } from 'langfuse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../conformance/env.ts';
import { MODE_ENV, type Project } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';

let suite: ServiceSuite;
let project: Project;
let lf: Langfuse;

beforeAll(async () => {
  suite = await startServiceSuite({ project: 'composition', env: MODE_ENV.events_only });
  project = suite.project;
  lf = new Langfuse({ publicKey: project.publicKey, secretKey: project.secretKey, baseUrl: suite.web.url });
});

afterAll(async () => {
  await lf?.shutdownAsync();
  await stopServiceSuite(suite);
});

const call = (method: string, path: string, body?: unknown) =>
  api<Record<string, unknown>>({ url: suite.web.url, ...project }, method, path, body);
const tag = (body: string) => `@@@langfusePrompt:${body}@@@`;

describe('prompt composition', () => {
  it('resolves references by label and version, nested, in text and chat prompts read by the SDK', async () => {
    await lf.createPrompt({ name: 'shared/tone', prompt: 'Be kind.', labels: ['production'] });
    await lf.createPrompt({ name: 'shared/tone', prompt: 'Be terse.', labels: [] });
    await lf.createPrompt({
      name: 'shared/rules',
      prompt: `${tag('name=shared/tone|label=production')} Answer in {{lang}}.`,
      labels: ['production'],
    });
    await lf.createPrompt({
      name: 'support',
      prompt: `${tag('name=shared/rules|label=production')} Also: ${tag('name=shared/tone|version=2')}`,
      labels: ['production'],
    });
    const text = await lf.getPrompt('support', undefined, { cacheTtlSeconds: 0 });
    expect(text.prompt).toBe('Be kind. Answer in {{lang}}. Also: Be terse.');
    expect(text.compile({ lang: 'French' })).toBe('Be kind. Answer in French. Also: Be terse.');

    await lf.createPrompt({
      name: 'support-chat',
      type: 'chat',
      prompt: [
        { role: 'system', content: tag('name=shared/rules|label=production') },
        { role: 'user', content: '{{question}}' },
      ],
      labels: ['production'],
    });
    const chat = await lf.getPrompt('support-chat', undefined, { type: 'chat', cacheTtlSeconds: 0 });
    expect(chat.prompt).toMatchObject([
      { role: 'system', content: 'Be kind. Answer in {{lang}}.' },
      { role: 'user', content: '{{question}}' },
    ]);

    // The stored form, and the versions the resolution used.
    const raw = await call('GET', '/api/public/v2/prompts/support?resolve=false');
    expect(raw.body['prompt']).toBe(
      `${tag('name=shared/rules|label=production')} Also: ${tag('name=shared/tone|version=2')}`,
    );
    expect(raw.body['resolutionGraph']).toBeNull();
    const graph = (await call('GET', '/api/public/v2/prompts/support')).body['resolutionGraph'] as {
      root: { name: string };
      dependencies: Record<string, { name: string; version: number }[]>;
    };
    expect(graph.root.name).toBe('support');
    expect(
      Object.values(graph.dependencies)
        .flat()
        .map((n) => `${n.name} v${n.version}`)
        .sort(),
    ).toEqual(['shared/rules v1', 'shared/tone v1', 'shared/tone v2']);

    // Moving the label changes what the composed prompt reads.
    await lf.updatePrompt({ name: 'shared/tone', version: 2, newLabels: ['production'] });
    expect((await lf.getPrompt('support', undefined, { cacheTtlSeconds: 0 })).prompt).toBe(
      'Be terse. Answer in {{lang}}. Also: Be terse.',
    );
  });

  it('refuses missing references and cycles with 400 naming them, on create, label moves and reads', async () => {
    const missing = await call('POST', '/api/public/v2/prompts', {
      name: 'orphan',
      prompt: tag('name=nowhere|label=production'),
    });
    expect(missing.status).toBe(400);
    expect(missing.body['message']).toBe('Referenced prompt not found: nowhere with label production');
    expect((await call('GET', '/api/public/v2/prompts/orphan?label=latest')).status).toBe(404);

    await lf.createPrompt({ name: 'a', prompt: 'plain a', labels: ['production'] });
    await lf.createPrompt({ name: 'b', prompt: `b then ${tag('name=a|label=production')}`, labels: [] });
    const cycle = await call('POST', '/api/public/v2/prompts', {
      name: 'a',
      prompt: `a then ${tag('name=b|version=1')}`,
      labels: ['production'],
    });
    expect(cycle.status).toBe(400);
    expect(cycle.body['message']).toBe('Circular prompt reference: a -> b -> a');
    // Refused whole: no version 2 of `a`, and `production` stayed on version 1.
    expect((await call('GET', '/api/public/v2/prompts/a?version=2')).status).toBe(404);
    expect((await lf.getPrompt('a', undefined, { cacheTtlSeconds: 0 })).version).toBe(1);

    // Each step alone is acyclic; moving the last label closes x -> y -> x.
    await lf.createPrompt({ name: 'x', prompt: 'plain x', labels: ['production'] });
    await lf.createPrompt({ name: 'y', prompt: 'plain y', labels: ['production'] });
    await lf.createPrompt({ name: 'x', prompt: `x then ${tag('name=y|label=production')}`, labels: [] });
    await lf.createPrompt({ name: 'y', prompt: `y then ${tag('name=x|label=production')}`, labels: [] });
    expect(
      (await call('PATCH', '/api/public/v2/prompts/x/versions/2', { newLabels: ['production'] })).status,
    ).toBe(200);
    const moved = await call('PATCH', '/api/public/v2/prompts/y/versions/2', { newLabels: ['production'] });
    expect(moved.status).toBe(400);
    expect(moved.body['message']).toBe('Circular prompt reference: y -> x -> y');
    expect((await lf.getPrompt('y', undefined, { cacheTtlSeconds: 0 })).version).toBe(1);

    const chatRef = await call('POST', '/api/public/v2/prompts', {
      name: 'uses-chat',
      prompt: tag('name=support-chat|label=production'),
    });
    expect(chatRef.status).toBe(400);
    expect(chatRef.body['message']).toContain('support-chat with label production is a chat prompt');

    // Deleting what a prompt references makes its read a 400 naming the reference.
    await lf.createPrompt({ name: 'leaf', prompt: 'leaf', labels: ['production'] });
    await lf.createPrompt({ name: 'tree', prompt: `${tag('name=leaf|version=1')}!`, labels: ['production'] });
    expect((await call('DELETE', '/api/public/v2/prompts/leaf')).status).toBe(204);
    const broken = await call('GET', '/api/public/v2/prompts/tree');
    expect(broken.status).toBe(400);
    expect(broken.body['message']).toBe('Referenced prompt not found: leaf version 1');
    expect((await call('GET', '/api/public/v2/prompts/tree?resolve=false')).body['prompt']).toBe(
      `${tag('name=leaf|version=1')}!`,
    );
  });
});
