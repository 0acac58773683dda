import { describe, expect, it } from 'vitest';
import {
  traceDeleteStatement,
  traceObservationIdsQuery,
} from '../../server/features/deletion/trace-deletion-sql.ts';
import { traceTables } from '../../server/features/tombstones/tables.ts';
import { SINGLE_NODE } from '../../server/platform/migrations/analytics/dialect.ts';

const CLUSTER = { cluster: true, clusterName: 'c1' };

describe('tables a trace deletion reaches', () => {
  it.each([
    ['3', ['traces', 'observations', 'scores']],
    ['4', ['traces', 'observations', 'scores', 'observations_batch_staging', 'events_full', 'events_core']],
  ] as const)('release %s', (release, tables) => {
    expect(traceTables(release)).toEqual(tables);
  });
});

describe('the statement deleting traces from one table', () => {
  const where = (col: string) => `project_id = {project_id:String} AND ${col} IN {trace_ids:Array(String)}`;
  it.each([
    [
      'traces',
      'lightweight',
      SINGLE_NODE,
      `DELETE FROM traces WHERE ${where('id')} SETTINGS lightweight_deletes_sync = 2`,
    ],
    [
      'traces',
      'mutation',
      SINGLE_NODE,
      `ALTER TABLE traces DELETE WHERE ${where('id')} SETTINGS mutations_sync = 2`,
    ],
    [
      'observations',
      'mutation',
      SINGLE_NODE,
      `ALTER TABLE observations DELETE WHERE ${where('trace_id')} SETTINGS mutations_sync = 2`,
    ],
    [
      'scores',
      'lightweight',
      SINGLE_NODE,
      `DELETE FROM scores WHERE ${where('trace_id')} SETTINGS lightweight_deletes_sync = 2`,
    ],
    [
      'events_full',
      'lightweight',
      CLUSTER,
      `DELETE FROM events_full ON CLUSTER c1 WHERE ${where('trace_id')} SETTINGS lightweight_deletes_sync = 2`,
    ],
    [
      'events_core',
      'mutation',
      CLUSTER,
      `ALTER TABLE events_core ON CLUSTER c1 DELETE WHERE ${where('trace_id')} SETTINGS mutations_sync = 2`,
    ],
    [
      'observations_batch_staging',
      'mutation',
      SINGLE_NODE,
      `ALTER TABLE observations_batch_staging DELETE WHERE ${where('trace_id')} SETTINGS mutations_sync = 2`,
    ],
  ] as const)('%s, %s', (table, form, dialect, query) => {
    const s = traceDeleteStatement(table, form, dialect, 'p1', ['t1', 't2']);
    expect(s).toEqual({ query, params: { project_id: 'p1', trace_ids: ['t1', 't2'] } });
  });

  it('takes ids only as parameters, never in the text', () => {
    const s = traceDeleteStatement('traces', 'lightweight', SINGLE_NODE, "p'1", ["t'); DROP TABLE x; --"]);
    expect(s.query).not.toContain('DROP');
    expect(s.params['trace_ids']).toEqual(["t'); DROP TABLE x; --"]);
  });
});

describe('observation ids of the traces (for their comments and media)', () => {
  it.each([
    ['3', ['FROM observations']],
    ['4', ['FROM observations', 'FROM events_full']],
  ] as const)('release %s reads %j', (release, sources) => {
    const q = traceObservationIdsQuery(release);
    for (const s of sources) expect(q).toContain(s);
    expect(q.match(/project_id = \{project_id:String\}/g)).toHaveLength(sources.length);
  });
});
