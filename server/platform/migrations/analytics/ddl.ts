/** DDL statement builders over a Dialect. Every statement is idempotent (IF [NOT] EXISTS). */
import { type Dialect, engine, ident, onCluster } from './dialect.ts';
import { type Column, renderColumns } from './tables.ts';

export interface TableLayout {
  engine: 'MergeTree' | 'ReplacingMergeTree';
  engineArgs?: string;
  partitionBy?: string;
  primaryKey?: string;
  orderBy: string;
  ttl?: string;
  sampleBy?: string;
  settings?: string;
  indexes?: string[];
}

export function createTable(d: Dialect, name: string, cols: readonly Column[], t: TableLayout): string {
  const body = [...renderColumns(cols), ...(t.indexes ?? []).map((i) => `INDEX ${i}`)].join(',\n  ');
  return [
    `CREATE TABLE IF NOT EXISTS ${ident(name)}${onCluster(d)} (\n  ${body}\n)`,
    `ENGINE = ${engine(d, t.engine, t.engineArgs)}`,
    t.partitionBy && `PARTITION BY ${t.partitionBy}`,
    t.primaryKey && `PRIMARY KEY ${t.primaryKey}`,
    `ORDER BY ${t.orderBy}`,
    t.sampleBy && `SAMPLE BY ${t.sampleBy}`,
    t.ttl && `TTL ${t.ttl}`,
    t.settings && `SETTINGS ${t.settings}`,
  ]
    .filter(Boolean)
    .join('\n');
}

export const dropTable = (d: Dialect, name: string): string =>
  `DROP TABLE IF EXISTS ${ident(name)}${onCluster(d)}`;

export const dropView = (d: Dialect, name: string): string =>
  `DROP VIEW IF EXISTS ${ident(name)}${onCluster(d)}`;

export function createMaterializedView(d: Dialect, name: string, target: string, select: string): string {
  return `CREATE MATERIALIZED VIEW IF NOT EXISTS ${ident(name)}${onCluster(d)} TO ${ident(target)} AS\n${select}`;
}

export const modifyViewQuery = (d: Dialect, name: string, select: string): string =>
  `ALTER TABLE ${ident(name)}${onCluster(d)} MODIFY QUERY\n${select}`;

const alter = (d: Dialect, table: string, clauses: string[]): string =>
  `ALTER TABLE ${ident(table)}${onCluster(d)}\n  ${clauses.join(',\n  ')}`;

export const addColumns = (d: Dialect, table: string, cols: readonly Column[]): string =>
  alter(
    d,
    table,
    renderColumns(cols).map((col) => `ADD COLUMN IF NOT EXISTS ${col}`),
  );

export const dropColumns = (d: Dialect, table: string, cols: readonly Column[]): string =>
  alter(
    d,
    table,
    cols.map((col) => `DROP COLUMN IF EXISTS ${ident(col.name)}`),
  );

/** `definition` is `<name> <expression> TYPE <type> GRANULARITY <n>`. */
export const addIndex = (d: Dialect, table: string, definition: string): string =>
  alter(d, table, [`ADD INDEX IF NOT EXISTS ${definition}`]);

export const dropIndex = (d: Dialect, table: string, name: string): string =>
  alter(d, table, [`DROP INDEX IF EXISTS ${ident(name)}`]);
