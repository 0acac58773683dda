/** The trace view's tree order, waterfall bars and value rendering, by tables. */
import { describe, expect, it } from 'vitest';
import {
  renderValue,
  spanLinks,
  traceBounds,
  treeOrder,
  waterfallBar,
} from '../../server/app/ui/src/features/traces/trace-model.ts';

const o = (id: string, parent: string | null, start: number, end: number | null) => ({
  id,
  parentObservationId: parent,
  startTime: new Date(Date.UTC(2026, 0, 1) + start).toISOString(),
  endTime: end === null ? null : new Date(Date.UTC(2026, 0, 1) + end).toISOString(),
});

describe('trace tree', () => {
  it('orders depth first, children by start time, orphans as roots', () => {
    const list = [
      o('c2', 'r', 30, 40),
      o('g', 'c1', 12, 15),
      o('r', null, 0, 100),
      o('c1', 'r', 10, 20),
      o('orphan', 'missing', 50, 60),
    ];
    expect(treeOrder(list).map(({ node, depth }) => `${'-'.repeat(depth)}${node.id}`)).toEqual([
      'r',
      '-c1',
      '--g',
      '-c2',
      'orphan',
    ]);
  });

  it.each([
    [o('a', null, 0, 100), { left: 0, width: 100 }],
    [o('b', null, 25, 50), { left: 25, width: 25 }],
    [o('c', null, 50, null), { left: 50, width: 0.5 }],
  ])('bar of %j', (obs, bar) => {
    const b = traceBounds([o('a', null, 0, 100)]);
    expect(waterfallBar(obs, b.start, b.end)).toEqual(bar);
  });
});

describe('rendering values', () => {
  it.each([
    [null, { kind: 'empty' }],
    ['', { kind: 'empty' }],
    ['plain text', { kind: 'text', text: 'plain text' }],
    ['"a json string"', { kind: 'text', text: 'a json string' }],
    ['{"a":1}', { kind: 'json', text: '{\n  "a": 1\n}' }],
    [
      '[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"yo"}]}]',
      {
        kind: 'chat',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '[\n  {\n    "type": "text",\n    "text": "yo"\n  }\n]' },
        ],
      },
    ],
    [
      '{"messages":[{"role":"system","content":"be brief"}]}',
      { kind: 'chat', messages: [{ role: 'system', content: 'be brief' }] },
    ],
    ['[1,2]', { kind: 'json', text: '[\n  1,\n  2\n]' }],
  ])('%s', (raw, rendered) => expect(renderValue(raw)).toEqual(rendered));
});

describe('span links', () => {
  const link = { traceId: 'a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5', spanId: '00f067aa0ba902b7' };
  it.each<[string, Record<string, unknown> | null, { traceId: string; spanId: string }[]]>([
    ['metadata links as JSON text', { links: JSON.stringify([{ ...link, attributes: { a: 1 } }]) }, [link]],
    ['metadata links already parsed', { links: [link] }, [link]],
    ['no links', { scope: '{}' }, []],
    ['no metadata', null, []],
    ['links that are not JSON', { links: 'a,b' }, []],
    ['entries without ids left out', { links: JSON.stringify([{ traceId: 1 }, link]) }, [link]],
  ])('%s', (_name, metadata, expected) => {
    expect(spanLinks(metadata)).toEqual(expected);
  });
});
