import { describe, expect, it } from 'vitest';
import {
  traceEventAssignments,
  traceEventsUpdateStatement,
} from '../../server/features/write-model/trace-events-update.ts';

const trace = {
  id: 't1',
  name: 'chat',
  user_id: 'u1',
  session_id: null,
  release: null,
  version: 'v1',
  tags: ['a'],
  public: false,
  bookmarked: false,
};

describe('assignments a trace update makes on its events', () => {
  it.each([
    ['nothing events carry', { metadata: { a: '1' }, input: 'x' }, [], {}],
    [
      'the name, as trace_name',
      { name: 'chat2' },
      ['trace_name = {trace_name:String}'],
      { trace_name: 'chat2' },
    ],
    [
      'user and session (null reads as empty)',
      { user_id: 'u2', session_id: 's1' },
      ['user_id = {user_id:String}', 'session_id = {session_id:String}'],
      { user_id: 'u2', session_id: 's1' },
    ],
    ['the release', { release: 'r2' }, ['release = {release:String}'], { release: 'r2' }],
    ['the tags', { tags: ['a', 'b'] }, ['tags = {tags:Array(String)}'], { tags: ['a', 'b'] }],
    [
      'the flags',
      { public: true, bookmarked: 1 },
      ['public = {public:Bool}', 'bookmarked = {bookmarked:Bool}'],
      { public: true, bookmarked: true },
    ],
    [
      "the version, only on events that carry the trace's previous one",
      { version: 'v2' },
      ['version = if(version = {old_version:String}, {version:String}, version)'],
      { old_version: 'v1', version: 'v2' },
    ],
  ])('%s', (_, change, set, params) => {
    expect(traceEventAssignments(trace, { ...trace, ...change })).toEqual({ set, params });
  });
});

describe('the statement, by form and deployment', () => {
  const assignments = { set: ['public = {public:Bool}'], params: { public: true } };
  const single = { cluster: false, clusterName: 'default' };
  const clustered = { cluster: true, clusterName: 'obs_cluster' };
  const where = 'WHERE project_id = {project_id:String} AND trace_id = {trace_id:String}';
  it.each([
    ['lightweight', 'events_full', single, `UPDATE events_full SET public = {public:Bool} ${where}`],
    [
      'mutation',
      'events_core',
      single,
      `ALTER TABLE events_core UPDATE public = {public:Bool} ${where} SETTINGS mutations_sync = 2`,
    ],
    [
      'lightweight',
      'events_core',
      clustered,
      `UPDATE events_core ON CLUSTER obs_cluster SET public = {public:Bool} ${where}`,
    ],
    [
      'mutation',
      'events_full',
      clustered,
      `ALTER TABLE events_full ON CLUSTER obs_cluster UPDATE public = {public:Bool} ${where} SETTINGS mutations_sync = 2`,
    ],
  ] as const)('%s on %s (cluster %o)', (form, table, dialect, query) => {
    expect(traceEventsUpdateStatement(table, form, dialect, 'p', 't1', assignments)).toEqual({
      query,
      params: { public: true, project_id: 'p', trace_id: 't1' },
    });
  });

  it('refuses a cluster name that is not an identifier', () => {
    const bad = { cluster: true, clusterName: 'x; DROP TABLE traces' };
    expect(() =>
      traceEventsUpdateStatement('events_full', 'lightweight', bad, 'p', 't1', assignments),
    ).toThrow(/invalid identifier/);
  });
});
