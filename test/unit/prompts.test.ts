/** Table tests of the prompt rules: labels, selectors, request shapes, list summaries. */
import { describe, expect, it } from 'vitest';
import {
  createPromptRequest,
  labelsAfterUpdate,
  labelsOfNewVersion,
  type PromptVersion,
  selectorOf,
  summarizeVersions,
  updateLabelsRequest,
  withDefaultType,
} from '../../server/features/prompts/rules.ts';

describe('prompt labels', () => {
  it.each([
    [undefined, ['latest']],
    [null, ['latest']],
    [['production'], ['production', 'latest']],
    [
      ['latest', 'production'],
      ['latest', 'production'],
    ],
    [
      ['a', 'a'],
      ['a', 'latest'],
    ],
  ])('a new version requested with %j carries %j', (requested, expected) => {
    expect(labelsOfNewVersion(requested)).toEqual(expected);
  });

  it.each([
    [['latest'], ['production'], ['latest', 'production']],
    [['production'], ['production'], ['production']],
    [[], ['a', 'b'], ['a', 'b']],
  ])('%j plus %j is %j', (current, added, expected) => {
    expect(labelsAfterUpdate(current, added)).toEqual(expected);
  });

  it.each([
    [{ newLabels: ['production', 'staging-2', 'v1.2'] }, true],
    [{ newLabels: ['latest'] }, false],
    [{ newLabels: ['Production'] }, false],
    [{ newLabels: ['has space'] }, false],
    [{}, false],
  ])('label update %j valid: %s', (body, valid) => {
    expect(updateLabelsRequest.safeParse(body).success).toBe(valid);
  });

  it.each([
    [{}, { label: 'production' }],
    [{ label: 'staging' }, { label: 'staging' }],
    [{ version: 3 }, { version: 3 }],
    [{ version: 3, label: 'staging' }, { version: 3 }],
  ])('a read of %j selects %j', (query, selector) => {
    expect(selectorOf(query)).toEqual(selector);
  });
});

describe('prompt requests', () => {
  const parse = (body: unknown) => createPromptRequest.safeParse(withDefaultType(body));
  it.each([
    ['text without type', { name: 'a', prompt: 'hi' }, true],
    [
      'text with nulls',
      { name: 'a', prompt: 'hi', type: 'text', labels: null, tags: null, commitMessage: null },
      true,
    ],
    ['folder name', { name: 'team/sub/a', prompt: 'hi' }, true],
    ['empty folder segment', { name: 'team//a', prompt: 'hi' }, false],
    [
      'chat with placeholder',
      {
        name: 'c',
        type: 'chat',
        prompt: [
          { role: 'user', content: 'x' },
          { type: 'placeholder', name: 'h' },
        ],
      },
      true,
    ],
    [
      'chat message with its type',
      { name: 'c', type: 'chat', prompt: [{ role: 'user', content: 'x', type: 'chatmessage' }] },
      true,
    ],
    ['chat given a string', { name: 'c', type: 'chat', prompt: 'x' }, false],
    ['text given messages', { name: 'c', prompt: [{ role: 'user', content: 'x' }] }, false],
    ['unknown type', { name: 'c', type: 'image', prompt: 'x' }, false],
    ['upper-case label', { name: 'c', prompt: 'x', labels: ['Prod'] }, false],
  ])('%s: valid %s', (_, body, valid) => {
    expect(parse(body).success).toBe(valid);
  });
});

describe('prompt list summaries', () => {
  const v = (
    name: string,
    version: number,
    labels: string[],
    over: Partial<PromptVersion> = {},
  ): PromptVersion => ({
    name,
    version,
    type: 'text',
    labels,
    tags: [],
    config: { v: version },
    updatedAt: `2026-01-0${version}T00:00:00.000Z`,
    ...over,
  });
  it('one entry per name in first-seen order; versions ascending; newest version’s type, tags, config', () => {
    expect(
      summarizeVersions([
        v('b', 1, ['production']),
        v('a', 2, ['latest'], { tags: ['t2'], type: 'chat' }),
        v('a', 1, ['production'], { tags: ['t1'] }),
        v('b', 2, ['latest']),
      ]),
    ).toEqual([
      {
        name: 'b',
        type: 'text',
        versions: [1, 2],
        labels: ['latest', 'production'],
        tags: [],
        lastUpdatedAt: '2026-01-02T00:00:00.000Z',
        lastConfig: { v: 2 },
      },
      {
        name: 'a',
        type: 'chat',
        versions: [1, 2],
        labels: ['latest', 'production'],
        tags: ['t2'],
        lastUpdatedAt: '2026-01-02T00:00:00.000Z',
        lastConfig: { v: 2 },
      },
    ]);
  });
  it('no versions, no entries', () => {
    expect(summarizeVersions([])).toEqual([]);
  });
});
