import { describe, expect, it } from 'vitest';
import {
  folderEntries,
  lineDiff,
  promptText,
  variablesOf,
} from '../../server/app/ui/src/features/prompts/prompt-view.ts';

describe('folderEntries', () => {
  const names = ['greet', 'team/a', 'team/b', 'team/deep/c', 'other/x', 'teamless'];
  it.each([
    ['', ['other/', 'team/', 'greet', 'teamless']],
    ['team', ['deep/', 'a', 'b']],
    ['team/deep', ['c']],
    ['nowhere', []],
  ])('folder %j', (folder, shown) => {
    expect(folderEntries(names, folder).map((e) => (e.kind === 'folder' ? `${e.label}/` : e.label))).toEqual(
      shown,
    );
  });
  it('keeps full paths', () => {
    expect(folderEntries(names, 'team')).toEqual([
      { label: 'deep', path: 'team/deep', kind: 'folder' },
      { label: 'a', path: 'team/a', kind: 'prompt' },
      { label: 'b', path: 'team/b', kind: 'prompt' },
    ]);
  });
});

describe('variablesOf and promptText', () => {
  it.each([
    ['Hi {{name}} and {{ name }} from {{city}}', ['name', 'city']],
    [
      [
        { role: 'system', content: '{{a}}' },
        { type: 'placeholder', name: 'h' },
        { role: 'user', content: '{{b}}' },
      ],
      ['a', 'b'],
    ],
    ['no variables', []],
  ])('%j', (prompt, vars) => {
    expect(variablesOf(prompt)).toEqual(vars);
  });
  it('renders chat prompts one message a line', () => {
    expect(
      promptText([
        { role: 'system', content: 'S' },
        { type: 'placeholder', name: 'h' },
      ]),
    ).toBe('system: S\n[placeholder: h]');
  });
});

describe('lineDiff', () => {
  it.each([
    ['a\nb\nc', 'a\nb\nc', ['  a', '  b', '  c']],
    ['a\nb\nc', 'a\nc', ['  a', '- b', '  c']],
    ['a\nc', 'a\nb\nc', ['  a', '+ b', '  c']],
    ['x', 'y', ['- x', '+ y']],
    ['', 'y', ['- ', '+ y']],
  ])('%j -> %j', (before, after, lines) => {
    const sign = { same: ' ', removed: '-', added: '+' } as const;
    expect(lineDiff(before, after).map((l) => `${sign[l.op]} ${l.text}`)).toEqual(lines);
  });
});
