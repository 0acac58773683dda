/** The order trace views list observations in (server/features/reads/tree-order.ts). */
import { describe, expect, it } from 'vitest';
import { type TreeNode, treeOrder } from '../../server/features/reads/tree-order.ts';

const T0 = '2026-05-01T10:00:00.000Z';
const T1 = '2026-05-01T10:00:00.001Z';
const node = (id: string, startTime: string, parentId: string | null = null): TreeNode => ({
  id,
  startTime,
  parentId,
});
const ids = (nodes: TreeNode[]) => treeOrder(nodes, (n) => n).map((n) => n.id);

describe('trace view order', () => {
  it.each<[string, TreeNode[], string[]]>([
    ['oldest first', [node('b', T1), node('a', T0)], ['a', 'b']],
    [
      'a child that started in its parent’s millisecond comes after it, whatever the ids',
      [node('0-gen', T0, 'z-root'), node('z-root', T0)],
      ['z-root', '0-gen'],
    ],
    [
      'three levels in one millisecond, given upside down',
      [node('c', T0, 'b'), node('b', T0, 'a'), node('a', T0)],
      ['a', 'b', 'c'],
    ],
    [
      'siblings of one instant by id',
      [node('y', T0, 'p'), node('x', T0, 'p'), node('p', T0)],
      ['p', 'x', 'y'],
    ],
    ['a parent outside the list counts as a root', [node('b', T0, 'gone'), node('a', T0)], ['a', 'b']],
    ['a cycle in bad data still ends', [node('a', T0, 'b'), node('b', T0, 'a')], ['a', 'b']],
    ['an earlier child still comes first (time wins)', [node('p', T1), node('c', T0, 'p')], ['c', 'p']],
  ])('%s', (_name, nodes, want) => {
    expect(ids(nodes)).toEqual(want);
  });
});
