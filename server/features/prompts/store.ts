/**
 * Prompts in PostgreSQL. One row per version; a label lives on one version of a name at a time.
 * Writes to one prompt name are serialized by a transaction-scoped advisory lock on
 * (project, name), so concurrent creates get consecutive versions and labels never end up on two
 * versions. Every statement is scoped by the caller's project.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { inTransaction } from '../../platform/datastores/transaction.ts';
import { audit } from '../audit/audit.ts';
import { type Lookup, type ResolutionGraph, resolveComposition } from './composition.ts';
import {
  type CreatePromptRequest,
  LATEST,
  labelsAfterUpdate,
  labelsOfNewVersion,
  type PromptSelector,
  summarizeVersions,
} from './rules.ts';

interface PromptRow {
  id: string;
  project_id: string;
  name: string;
  version: number;
  type: 'text' | 'chat';
  prompt: unknown;
  config: unknown;
  labels: string[];
  tags: string[];
  commit_message: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

/** A prompt version in the shape the SDKs parse (`Prompt` of their generated clients). */
export function toPrompt(r: PromptRow, resolved?: { prompt: unknown; graph: ResolutionGraph | null }) {
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    version: r.version,
    type: r.type,
    prompt: resolved ? resolved.prompt : r.prompt,
    config: r.config,
    labels: r.labels,
    tags: r.tags,
    commitMessage: r.commit_message,
    createdBy: r.created_by,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    resolutionGraph: resolved?.graph ?? null,
  };
}
export type Prompt = ReturnType<typeof toPrompt>;

/** A transaction holding the prompt's advisory lock: writes of one prompt's versions take turns. */
const lockedPrompt = <T>(
  pool: pg.Pool,
  projectId: string,
  name: string,
  fn: (c: pg.PoolClient) => Promise<T>,
) =>
  inTransaction(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`prompt:${projectId}:${name}`]);
    return fn(c);
  });

/** Takes these labels off every other version of the prompt. */
const RELEASE_LABELS = `
UPDATE prompts SET labels = ARRAY(SELECT l FROM unnest(labels) AS l WHERE l <> ALL($4::text[])), updated_at = now()
WHERE project_id = $1 AND name = $2 AND version <> $3 AND labels && $4::text[]`;

export async function createPrompt(
  pool: pg.Pool,
  projectId: string,
  req: CreatePromptRequest,
): Promise<Prompt> {
  return lockedPrompt(pool, projectId, req.name, async (c) => {
    const prev = await c.query<{ version: number; tags: string[]; type: string }>(
      'SELECT version, tags, type FROM prompts WHERE project_id = $1 AND name = $2 ORDER BY version DESC LIMIT 1',
      [projectId, req.name],
    );
    const last = prev.rows[0];
    const version = (last?.version ?? 0) + 1;
    const labels = labelsOfNewVersion(req.labels);
    // Tags belong to the prompt: given ones replace those of every version, else they carry over.
    const tags = req.tags ?? last?.tags ?? [];
    await c.query(RELEASE_LABELS, [projectId, req.name, version, labels]);
    if (req.tags) {
      await c.query('UPDATE prompts SET tags = $3 WHERE project_id = $1 AND name = $2', [
        projectId,
        req.name,
        tags,
      ]);
    }
    const { rows } = await c.query<PromptRow>(
      `INSERT INTO prompts (id, project_id, name, version, type, prompt, config, labels, tags, commit_message)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10) RETURNING *`,
      [
        randomUUID(),
        projectId,
        req.name,
        version,
        req.type,
        JSON.stringify(req.prompt),
        JSON.stringify(req.config ?? {}),
        labels,
        tags,
        req.commitMessage ?? null,
      ],
    );
    // Checked with the new version in place, so a cycle through its labels is seen (and rolled back).
    await resolved(c, rows[0]!);
    return toPrompt(rows[0]!);
  });
}

type Queryable = Pick<pg.Pool, 'query'>;

async function selectVersion(db: Queryable, projectId: string, name: string, selector: PromptSelector) {
  const { rows } =
    'version' in selector
      ? await db.query<PromptRow>(
          'SELECT * FROM prompts WHERE project_id = $1 AND name = $2 AND version = $3',
          [projectId, name, selector.version],
        )
      : await db.query<PromptRow>(
          'SELECT * FROM prompts WHERE project_id = $1 AND name = $2 AND $3 = ANY(labels) ORDER BY version DESC LIMIT 1',
          [projectId, name, selector.label],
        );
  return rows[0];
}

const lookupIn =
  (db: Queryable, projectId: string): Lookup =>
  (name, selector) =>
    selectVersion(db, projectId, name, selector);

/** The version with its references resolved (400 naming a missing one or a cycle). */
const resolved = async (db: Queryable, row: PromptRow): Promise<Prompt> =>
  toPrompt(row, await resolveComposition(row, lookupIn(db, row.project_id)));

/** A version, with its references resolved unless `resolve` is false (then as stored). */
export async function getPrompt(
  pool: pg.Pool,
  projectId: string,
  name: string,
  selector: PromptSelector,
  resolve = true,
): Promise<Prompt | undefined> {
  const row = await selectVersion(pool, projectId, name, selector);
  if (!row) return undefined;
  return resolve ? resolved(pool, row) : toPrompt(row);
}

/** Resolves a text or chat prompt that is not stored (the playground's) against the project's prompts. */
export async function resolveUnsaved(
  pool: pg.Pool,
  projectId: string,
  name: string,
  type: 'text' | 'chat',
  prompt: unknown,
): Promise<unknown> {
  const root = { id: '', name, version: 0, type, prompt };
  return (await resolveComposition(root, lookupIn(pool, projectId))).prompt;
}

/** Adds labels to one version (taking them off the others). Undefined when there is no such version. */
export async function addLabels(
  pool: pg.Pool,
  projectId: string,
  name: string,
  version: number,
  newLabels: string[],
): Promise<Prompt | undefined> {
  return lockedPrompt(pool, projectId, name, async (c) => {
    const current = await c.query<PromptRow>(
      'SELECT * FROM prompts WHERE project_id = $1 AND name = $2 AND version = $3',
      [projectId, name, version],
    );
    if (!current.rows[0]) return undefined;
    await c.query(RELEASE_LABELS, [projectId, name, version, newLabels]);
    const { rows } = await c.query<PromptRow>(
      `UPDATE prompts SET labels = $4, updated_at = now() WHERE project_id = $1 AND name = $2 AND version = $3 RETURNING *`,
      [projectId, name, version, labelsAfterUpdate(current.rows[0].labels, newLabels)],
    );
    // A label moved onto a version that references prompts can close a cycle through it.
    await resolved(c, rows[0]!);
    return toPrompt(rows[0]!);
  });
}

export interface PromptListFilter {
  name?: string | undefined;
  label?: string | undefined;
  tag?: string | undefined;
  fromUpdatedAt?: string | undefined;
  toUpdatedAt?: string | undefined;
}

/** Prompt names with their versions and labels (over the versions the filter keeps), newest first. */
export async function listPromptMeta(
  pool: pg.Pool,
  projectId: string,
  f: PromptListFilter,
  limit: number,
  offset: number,
) {
  const where = `p.project_id = $1 AND ($2::text IS NULL OR p.name = $2) AND ($3::text IS NULL OR $3 = ANY(p.labels))
    AND ($4::text IS NULL OR $4 = ANY(p.tags)) AND ($5::timestamptz IS NULL OR p.updated_at >= $5)
    AND ($6::timestamptz IS NULL OR p.updated_at < $6)`;
  const params = [
    projectId,
    f.name ?? null,
    f.label ?? null,
    f.tag ?? null,
    f.fromUpdatedAt ?? null,
    f.toUpdatedAt ?? null,
  ];
  const [versions, count] = await Promise.all([
    pool.query<PromptRow>(
      `WITH page AS (
         SELECT p.name, max(p.updated_at) AS last FROM prompts p WHERE ${where}
         GROUP BY p.name ORDER BY last DESC, p.name LIMIT $7 OFFSET $8)
       SELECT p.* FROM prompts p JOIN page ON page.name = p.name
       WHERE ${where} ORDER BY page.last DESC, p.name, p.version`,
      [...params, limit, offset],
    ),
    pool.query<{ n: number }>(
      `SELECT count(DISTINCT p.name)::int AS n FROM prompts p WHERE ${where}`,
      params,
    ),
  ]);
  return { items: summarizeVersions(versions.rows.map((r) => toPrompt(r))), total: count.rows[0]!.n };
}

/**
 * Deletes the versions of a prompt the selector picks (all of them without one) and returns the
 * rows deleted, none when nothing matched. When `latest` goes with them, it moves to the newest
 * version left, as the reference does. The deletion is audited in the same transaction.
 */
export async function deletePromptVersions(
  pool: pg.Pool,
  projectId: string,
  name: string,
  selector: PromptSelector | undefined,
  publicKey: string,
): Promise<Prompt[]> {
  return lockedPrompt(pool, projectId, name, async (c) => {
    const { rows } = await c.query<PromptRow>(
      `DELETE FROM prompts WHERE project_id = $1 AND name = $2
         AND ($3::int IS NULL OR version = $3) AND ($4::text IS NULL OR $4 = ANY(labels)) RETURNING *`,
      [
        projectId,
        name,
        selector && 'version' in selector ? selector.version : null,
        selector && 'label' in selector ? selector.label : null,
      ],
    );
    if (rows.some((r) => r.labels.includes(LATEST))) {
      await c.query(
        `UPDATE prompts SET labels = array_append(labels, $3), updated_at = now()
         WHERE id = (SELECT id FROM prompts WHERE project_id = $1 AND name = $2 ORDER BY version DESC LIMIT 1)`,
        [projectId, name, LATEST],
      );
    }
    await audit(c, {
      projectId,
      actor: { publicKey },
      resourceType: 'prompt',
      resourceIds: rows.map((r) => r.id),
    });
    return rows.map((r) => toPrompt(r));
  });
}

/** Every version of a prompt as stored, newest first. */
export async function listVersions(pool: pg.Pool, projectId: string, name: string): Promise<Prompt[]> {
  const { rows } = await pool.query<PromptRow>(
    'SELECT * FROM prompts WHERE project_id = $1 AND name = $2 ORDER BY version DESC',
    [projectId, name],
  );
  return rows.map((r) => toPrompt(r));
}
