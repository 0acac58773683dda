/**
 * Renders DDL for a single-node or a clustered analytics database. Clustered deployments
 * (COLUMNAR_CLUSTER_ENABLED=true) add `ON CLUSTER <name>` to every DDL statement and use the
 * replicated variant of each MergeTree engine. Pure string building.
 */
export interface Dialect {
  cluster: boolean;
  clusterName: string;
}

export const SINGLE_NODE: Dialect = { cluster: false, clusterName: 'default' };

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function ident(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`invalid identifier: ${name}`);
  return name;
}

/** ` ON CLUSTER name` on clustered deployments, nothing otherwise. */
export function onCluster(d: Dialect): string {
  return d.cluster ? ` ON CLUSTER ${ident(d.clusterName)}` : '';
}

/** `ReplacingMergeTree(args)` or its replicated variant. */
export function engine(d: Dialect, family: 'MergeTree' | 'ReplacingMergeTree', args = ''): string {
  return `${d.cluster ? `Replicated${family}` : family}(${args})`;
}
