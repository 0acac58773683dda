import { describe, expect, it } from 'vitest';
import {
  type ComposableVersion,
  type Lookup,
  referencesIn,
  resolveComposition,
} from '../../server/features/prompts/composition.ts';

const v = (name: string, version: number, prompt: unknown, labels: string[] = []) => ({
  version: { id: `${name}:${version}`, name, version, type: Array.isArray(prompt) ? 'chat' : 'text', prompt },
  labels,
});
type Stored = ReturnType<typeof v>;
const lookupOf =
  (stored: Stored[]): Lookup =>
  async (name, s) =>
    stored
      .filter((x) => x.version.name === name)
      .filter((x) => ('version' in s ? x.version.version === s.version : x.labels.includes(s.label)))
      .sort((a, b) => b.version.version - a.version.version)[0]?.version as ComposableVersion | undefined;

const ref = (body: string) => `@@@langfusePrompt:${body}@@@`;

describe('referencesIn', () => {
  it.each([
    [ref('name=a|label=production'), [{ name: 'a', selector: { label: 'production' } }]],
    [ref('name=team/a|version=3'), [{ name: 'team/a', selector: { version: 3 } }]],
    [`${ref('name=a|version=1')} and ${ref('name=b|label=x')}`, [{ name: 'a' }, { name: 'b' }]],
    // Malformed tags stay as text, as in the reference.
    [ref('name=a'), []],
    [ref('name=a|version=1|label=x'), []],
    [ref('name=a|version=0'), []],
    [ref('label=x'), []],
    ['@@@langfusePrompt:name=a|label=x', []],
  ])('%s', (text, expected) => {
    expect(referencesIn(text)).toMatchObject(expected);
  });
});

describe('resolveComposition', () => {
  const base = v('base', 1, 'Be brief.', ['production']);
  const base2 = v('base', 2, 'Be very brief.', ['staging', 'latest']);
  const mid = v('mid', 1, `Rules: ${ref('name=base|label=production')}`, ['production']);

  it('replaces label and version references, nested, in text and chat contents, with the graph', async () => {
    const root = v('root', 1, `${ref('name=mid|label=production')} / ${ref('name=base|version=2')}`).version;
    const out = await resolveComposition(root as ComposableVersion, lookupOf([base, base2, mid]));
    expect(out.prompt).toBe('Rules: Be brief. / Be very brief.');
    expect(out.graph).toEqual({
      root: { id: 'root:1', name: 'root', version: 1 },
      dependencies: {
        'root:1': [
          { id: 'mid:1', name: 'mid', version: 1 },
          { id: 'base:2', name: 'base', version: 2 },
        ],
        'mid:1': [{ id: 'base:1', name: 'base', version: 1 }],
      },
    });
    const chat = v('chat', 1, [
      { role: 'system', content: ref('name=base|label=staging') },
      { type: 'placeholder', name: 'history' },
      { role: 'user', content: '{{q}}' },
    ]).version as ComposableVersion;
    expect((await resolveComposition(chat, lookupOf([base, base2]))).prompt).toEqual([
      { role: 'system', content: 'Be very brief.' },
      { type: 'placeholder', name: 'history' },
      { role: 'user', content: '{{q}}' },
    ]);
  });

  it('leaves a prompt without references as it is, with no graph', async () => {
    expect(await resolveComposition(base.version as ComposableVersion, lookupOf([]))).toEqual({
      prompt: 'Be brief.',
      graph: null,
    });
  });

  it.each([
    [
      'a missing name',
      ref('name=nope|label=production'),
      'Referenced prompt not found: nope with label production',
    ],
    ['a missing version', ref('name=base|version=9'), 'Referenced prompt not found: base version 9'],
    ['a chat prompt', ref('name=chat|version=1'), 'Referenced prompt chat version 1 is a chat prompt'],
    ['itself', ref('name=root|label=production'), 'Circular prompt reference: root -> root'],
    [
      'a cycle through another',
      ref('name=loop|version=1'),
      'Circular prompt reference: root -> loop -> root',
    ],
  ])('refuses %s with a 400 naming it', async (_, text, message) => {
    const stored = [
      base,
      v('chat', 1, [{ role: 'user', content: 'hi' }]),
      v('loop', 1, ref('name=root|label=production')),
      v('root', 1, text, ['production']),
    ];
    const root = stored.at(-1)!.version as ComposableVersion;
    await expect(resolveComposition(root, lookupOf(stored))).rejects.toMatchObject({
      statusCode: 400,
      message: expect.stringContaining(message),
    });
  });

  it('refuses nesting deeper than the reference allows', async () => {
    const chain = Array.from({ length: 8 }, (_, i) =>
      v(`p${i}`, 1, i === 7 ? 'end' : ref(`name=p${i + 1}|version=1`)),
    );
    await expect(
      resolveComposition(chain[0]!.version as ComposableVersion, lookupOf(chain)),
    ).rejects.toMatchObject({ statusCode: 400, message: expect.stringContaining('deeper than 5 levels') });
  });
});
