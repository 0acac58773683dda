/**
 * The order a trace view lists its observations in: oldest first, and among observations that
 * started in the same instant (timestamps keep milliseconds, a span and its first child often
 * share one), a parent before its children, then by id, so the list reads as the tree does and
 * never changes between two reads.
 */
export interface TreeNode {
  id: string;
  startTime: string;
  parentId: string | null;
}

export function treeOrder<T>(nodes: readonly T[], nodeOf: (n: T) => TreeNode): T[] {
  const keyed = nodes.map((n) => ({ n, k: nodeOf(n) }));
  const parent = new Map(keyed.map(({ k }) => [k.id, k.parentId]));
  const depthOf = (id: string): number => {
    // Walk up at most the number of nodes: a cycle in bad data must not loop forever.
    let d = 0;
    for (let p = parent.get(id); p && parent.has(p) && d < nodes.length; p = parent.get(p)) d++;
    return d;
  };
  const ranked = keyed.map(({ n, k }) => ({ n, k, at: Date.parse(k.startTime), depth: depthOf(k.id) }));
  ranked.sort((a, b) => a.at - b.at || a.depth - b.depth || (a.k.id < b.k.id ? -1 : a.k.id > b.k.id ? 1 : 0));
  return ranked.map((r) => r.n);
}
