/**
 * Scores API v3 (`GET /api/public/v3/scores`) over the `scores` table, which version 4 keeps
 * live: csv filters, the subject rules (traceId | sessionId | experimentId), keyset pagination by
 * (timestamp, id) descending, and the value typed by data type. Pure builders and mappers.
 */
import { BadRequest } from '../../kernel/errors.ts';
import { metadataObject, num, orNull, toIso, withFieldGroups } from './row-values.ts';
import { decodeCursor, encodeCursor, Params, type Query, Where } from './sql.ts';

export const SCORE_FIELD_GROUPS = ['details', 'subject', 'annotation'] as const;
export type ScoreFieldGroup = (typeof SCORE_FIELD_GROUPS)[number];
const DATA_TYPES = ['NUMERIC', 'BOOLEAN', 'CATEGORICAL', 'TEXT', 'CORRECTION'];

export interface ScoresV3Request {
  projectId: string;
  limit: number;
  cursor?: string | undefined;
  fields?: string[] | undefined;
  id?: string[] | undefined;
  name?: string[] | undefined;
  source?: string[] | undefined;
  dataType?: string[] | undefined;
  environment?: string[] | undefined;
  configId?: string[] | undefined;
  queueId?: string[] | undefined;
  authorUserId?: string[] | undefined;
  value?: string[] | undefined;
  valueMin?: number | undefined;
  valueMax?: number | undefined;
  traceId?: string[] | undefined;
  sessionId?: string[] | undefined;
  observationId?: string[] | undefined;
  experimentId?: string[] | undefined;
  fromTimestamp?: string | undefined;
  toTimestamp?: string | undefined;
}

export function parseScoreFields(fields: string[] | undefined): Set<ScoreFieldGroup> {
  const out = new Set<ScoreFieldGroup>();
  for (const f of fields ?? []) {
    if (!(SCORE_FIELD_GROUPS as readonly string[]).includes(f)) {
      throw new BadRequest(`fields: unknown field group ${f} (allowed: ${SCORE_FIELD_GROUPS.join(', ')})`);
    }
    out.add(f as ScoreFieldGroup);
  }
  return out;
}

/** The query, after the reference's validation rules (each violation is a 400). */
export function buildScoresV3(r: ScoresV3Request): Query {
  const p = new Params();
  const where = new Where(p, `project_id = ${p.str(r.projectId)}`);
  const subjects = [r.traceId, r.sessionId, r.experimentId].filter((s) => s && s.length > 0).length;
  if (subjects > 1) throw new BadRequest('traceId, sessionId and experimentId are mutually exclusive');
  if (r.observationId?.length && !r.traceId?.length) throw new BadRequest('observationId requires traceId');
  const types = r.dataType?.map((t) => t.toUpperCase());
  for (const t of types ?? [])
    if (!DATA_TYPES.includes(t)) throw new BadRequest(`dataType: unknown data type ${t}`);
  const single = types?.length === 1 ? types[0] : undefined;
  if ((r.valueMin !== undefined || r.valueMax !== undefined) && single !== 'NUMERIC') {
    throw new BadRequest('valueMin and valueMax require dataType=NUMERIC');
  }
  where
    .anyOf('id', r.id)
    .anyOf('name', r.name)
    .anyOf(
      'upper(source)',
      r.source?.map((s) => s.toUpperCase()),
    )
    .anyOf('data_type', types)
    .anyOf('environment', r.environment)
    .anyOf('config_id', r.configId)
    .anyOf('queue_id', r.queueId)
    .anyOf('author_user_id', r.authorUserId)
    .anyOf('trace_id', r.traceId)
    .anyOf('session_id', r.sessionId)
    .anyOf('observation_id', r.observationId)
    .anyOf('dataset_run_id', r.experimentId);
  if (r.value && r.value.length > 0) {
    if (single === 'NUMERIC') {
      const ns = r.value.map(Number);
      if (ns.some((n) => !Number.isFinite(n)))
        throw new BadRequest('value: NUMERIC values must be finite numbers');
      where.add(`value IN ${p.add(ns, 'Array(Float64)')}`);
    } else if (single === 'BOOLEAN') {
      if (r.value.some((v) => v !== 'true' && v !== 'false'))
        throw new BadRequest('value: BOOLEAN values are true or false');
      where.add(
        `value IN ${p.add(
          r.value.map((v) => (v === 'true' ? 1 : 0)),
          'Array(Float64)',
        )}`,
      );
    } else if (single === 'CATEGORICAL') {
      where.add(`string_value IN ${p.strs(r.value)}`);
    } else {
      throw new BadRequest('value requires a single dataType of NUMERIC, BOOLEAN or CATEGORICAL');
    }
  }
  if (r.valueMin !== undefined) where.add(`value >= ${p.num(r.valueMin)}`);
  if (r.valueMax !== undefined) where.add(`value <= ${p.num(r.valueMax)}`);
  where.range('timestamp', r.fromTimestamp, r.toTimestamp);
  if (r.cursor) {
    const c = decodeCursor(r.cursor) as { t?: unknown; id?: unknown } | undefined;
    if (!c || typeof c.t !== 'string' || typeof c.id !== 'string')
      throw new BadRequest('cursor: not a cursor returned by this endpoint');
    where.add(`(timestamp, id) < (${p.time(c.t)}, ${p.str(c.id)})`);
  }
  const sql = [
    'SELECT * FROM scores FINAL',
    `WHERE ${where.sql()}`,
    'ORDER BY timestamp DESC, id DESC',
    `LIMIT ${p.add(r.limit + 1, 'UInt32')}`,
  ].join('\n');
  return { sql, params: p.values };
}

type Row = Record<string, unknown>;

/** The value in the type its data type promises. */
export function scoreValue(r: Row): number | boolean | string {
  switch (r['data_type']) {
    case 'NUMERIC':
      return Number(r['value']);
    case 'BOOLEAN':
      return Number(r['value']) === 1;
    case 'TEXT':
      return String(r['long_string_value'] || r['string_value'] || '');
    default:
      return String(r['string_value'] ?? '');
  }
}

export function scoreSubject(r: Row) {
  if (orNull(r['dataset_run_id'])) return { kind: 'experiment', id: r['dataset_run_id'] };
  if (orNull(r['observation_id'])) {
    return {
      kind: 'observation',
      id: r['observation_id'],
      ...(orNull(r['trace_id']) ? { traceId: r['trace_id'] } : {}),
    };
  }
  if (orNull(r['trace_id'])) return { kind: 'trace', id: r['trace_id'] };
  if (orNull(r['session_id'])) return { kind: 'session', id: r['session_id'] };
  return undefined;
}

export function mapScoreV3(r: Row, groups: Set<ScoreFieldGroup>): Record<string, unknown> {
  const base = {
    id: r['id'],
    projectId: r['project_id'],
    name: r['name'],
    value: scoreValue(r),
    dataType: r['data_type'],
    source: r['source'],
    timestamp: toIso(r['timestamp']),
    environment: r['environment'],
    createdAt: toIso(r['created_at']),
    updatedAt: toIso(r['updated_at']),
  };
  return withFieldGroups(base, groups, {
    details: () => ({
      comment: orNull(r['comment']),
      configId: orNull(r['config_id']),
      metadata: metadataObject(r['metadata']),
    }),
    annotation: () => ({ authorUserId: orNull(r['author_user_id']), queueId: orNull(r['queue_id']) }),
    subject: () => {
      const subject = scoreSubject(r);
      return subject ? { subject } : {};
    },
  });
}

export function scoresCursor(rows: Row[], limit: number): string | undefined {
  if (rows.length <= limit) return undefined;
  const last = rows[limit - 1]!;
  return encodeCursor({ t: String(last['timestamp']), id: String(last['id']) });
}

/** A score in the v1/v2 shape of the legacy endpoints (numeric value plus stringValue). */
export function mapScoreLegacy(r: Row): Record<string, unknown> {
  const type = String(r['data_type']);
  const out: Record<string, unknown> = {
    id: r['id'],
    traceId: orNull(r['trace_id']),
    sessionId: orNull(r['session_id']),
    observationId: orNull(r['observation_id']),
    datasetRunId: orNull(r['dataset_run_id']),
    name: r['name'],
    source: r['source'],
    timestamp: toIso(r['timestamp']),
    createdAt: toIso(r['created_at']),
    updatedAt: toIso(r['updated_at']),
    authorUserId: orNull(r['author_user_id']),
    comment: orNull(r['comment']),
    metadata: metadataObject(r['metadata']),
    configId: orNull(r['config_id']),
    queueId: orNull(r['queue_id']),
    environment: r['environment'],
    dataType: type,
    value: num(r['value']),
  };
  if (type === 'BOOLEAN') out['stringValue'] = Number(r['value']) === 1 ? 'True' : 'False';
  else if (type !== 'NUMERIC')
    out['stringValue'] = type === 'TEXT' ? scoreValue(r) : (r['string_value'] ?? '');
  return out;
}
