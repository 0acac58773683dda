/**
 * The relational tables pg_dump dumps the data of (ordinary tables outside the system schemas,
 * not an extension's own), each with its rows counted in the caller's transaction: in the
 * backup's exported snapshot when taking it, in the scratch database when verifying it.
 */
import type pg from 'pg';
import type { BackupTableRecord } from '../../contract/backup.ts';

const USER_TABLES = `
  SELECT n.nspname AS schema, c.relname AS name
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind = 'r'
    AND n.nspname NOT IN ('pg_catalog', 'information_schema')
    AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
    AND NOT EXISTS (SELECT 1 FROM pg_depend d
                    WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
  ORDER BY 1, 2`;

const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;

export async function countRelational(client: pg.ClientBase): Promise<BackupTableRecord[]> {
  const { rows: tables } = await client.query<{ schema: string; name: string }>(USER_TABLES);
  const out: BackupTableRecord[] = [];
  for (const t of tables) {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${quote(t.schema)}.${quote(t.name)}`,
    );
    out.push({ table: `${t.schema}.${t.name}`, rows: Number(rows[0]!.n) });
  }
  return out;
}
