import { describe, expect, it } from 'vitest';
import {
  traceEventAssignments,
  traceEventsUpdateStatement,
} from '../../server/ingestion/trace-events-update.ts';

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

describe('the statement, by form', () => {
  const assignments = { set: ['public = {public:Bool}'], params: { public: true } };
  it.each([
    [
      'lightweight',
      'events_full',
      'UPDATE events_full SET public = {public:Bool} WHERE project_id = {project_id:String} AND trace_id = {trace_id:String}',
    ],
    [
      'mutation',
      'events_core',
      'ALTER TABLE events_core UPDATE public = {public:Bool} WHERE project_id = {project_id:String} AND trace_id = {trace_id:String} SETTINGS mutations_sync = 2',
    ],
  ] as const)('%s on %s', (form, table, query) => {
    expect(traceEventsUpdateStatement(table, form, 'p', 't1', assignments)).toEqual({
      query,
      params: { public: true, project_id: 'p', trace_id: 't1' },
    });
  });
});
