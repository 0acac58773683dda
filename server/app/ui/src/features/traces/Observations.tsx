/**
 * The observations table: one row per trace by default (the `isRootObservation = true` filter
 * the bar starts with), the filter bar in the API v2 filter language, full-text search with the
 * match shown under its row, a time range, sortable columns and keyset "load more". Users on the
 * version 3 read path get its traces table instead, over the legacy tables, with the simple
 * filters and numbered pages of the version 3 experience.
 */
import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { type FilterCondition, parseFilterText } from '../../shared/filter-syntax.ts';
import { rangeBounds, TIME_RANGES, type TimeRange } from '../../shared/format.ts';
import { usePaged } from '../../shared/hooks.ts';
import { Grid, LoadMore } from '../../shared/lists.tsx';
import { AddToQueue } from '../annotation-queues/add-to-queue.tsx';
import type { QueueObject } from '../annotation-queues/api.ts';
import { type ProjectInfo, projectsApi } from '../projects/api.ts';
import type { Deployment } from '../users/api.ts';
import { type ObservationRow, tracesApi } from './api.ts';
import { LegacyTraces } from './legacy-traces.tsx';
import { HEADERS, ObservationRowView } from './observation-row.tsx';

export const DEFAULT_FILTER = 'isRootObservation = true';

interface Query {
  filters: FilterCondition[];
  search: string;
  range: TimeRange;
  orderBy: string;
  order: 'asc' | 'desc';
}

const SORTABLE: Record<string, string> = {
  Name: 'name',
  'Start time': 'startTime',
  Latency: 'latency',
  Tokens: 'totalTokens',
  Cost: 'totalCost',
};

/** What a row stands for in an annotation queue: a root row is its trace. */
const queueObjectOf = (r: ObservationRow): QueueObject =>
  r.isRootObservation
    ? { objectType: 'TRACE', objectId: r.traceId }
    : { objectType: 'OBSERVATION', objectId: r.id };

export function Observations({ projectId, deployment }: { projectId: string; deployment: Deployment }) {
  const [info, setInfo] = useState<ProjectInfo | undefined>();
  const [picked, setPicked] = useState<Map<string, QueueObject>>(new Map());
  const [infoError, setInfoError] = useState<string | undefined>();
  const [filterText, setFilterText] = useState(DEFAULT_FILTER);
  const [searchText, setSearchText] = useState('');
  const [query, setQuery] = useState<Query | undefined>();

  useEffect(() => {
    projectsApi.project(projectId).then(
      (p) => {
        setInfo(p);
        const parsed = parseFilterText(DEFAULT_FILTER, p.columns);
        setQuery({
          filters: parsed.ok ? parsed.filters : [],
          search: '',
          range: '24h',
          orderBy: 'startTime',
          order: 'desc',
        });
      },
      (e: Error) => setInfoError(e.message),
    );
  }, [projectId]);

  const v4Reads = deployment.v4Reads;
  const fetchPage = useMemo(
    () =>
      query && v4Reads
        ? (cursor?: string) =>
            tracesApi.observations(projectId, {
              filter: JSON.stringify(query.filters),
              search: query.search,
              orderBy: query.orderBy,
              order: query.order,
              cursor,
              ...rangeBounds(query.range, Date.now()),
            })
        : undefined,
    [projectId, query, v4Reads],
  );
  const paged = usePaged<ObservationRow>(fetchPage);
  const { rows, loading } = paged;
  const error = infoError ?? paged.error;

  if (!info) return <main className={error ? 'error' : 'muted'}>{error ?? 'Loading…'}</main>;

  const parsed = parseFilterText(filterText, info.columns);
  // Members and owners pick rows to add to an annotation queue.
  const canQueue = info.project.role !== 'viewer';
  const apply = (e: FormEvent) => {
    e.preventDefault();
    if (parsed.ok && query) setQuery({ ...query, filters: parsed.filters, search: searchText.trim() });
  };
  const sortBy = (column: string) => {
    if (!query) return;
    const order = query.orderBy === column && query.order === 'desc' ? 'asc' : 'desc';
    setQuery({ ...query, orderBy: column, order });
  };

  return (
    <main>
      <h1>
        {info.project.name} <span className="muted">· observations · {info.project.role}</span>
      </h1>
      {!deployment.v4Reads ? (
        <LegacyTraces projectId={projectId} />
      ) : (
        <>
          <form className="filters" onSubmit={apply}>
            <input
              className={`filterbar ${parsed.ok ? '' : 'invalid'}`}
              aria-label="Filter"
              value={filterText}
              spellCheck={false}
              onChange={(e) => setFilterText(e.target.value)}
              placeholder='name = "chat" AND latency > 2 AND tags any of ["prod"]'
            />
            <input
              className="search"
              aria-label="Full-text search"
              value={searchText}
              onChange={(e) => setSearchText(e.target.value)}
              placeholder="Search input, output, metadata"
            />
            <select
              aria-label="Time range"
              value={query?.range ?? '24h'}
              onChange={(e) => query && setQuery({ ...query, range: e.target.value as TimeRange })}
            >
              {Object.keys(TIME_RANGES).map((r) => (
                <option key={r} value={r}>
                  {r === 'all' ? 'All time' : `Past ${r}`}
                </option>
              ))}
            </select>
            <button type="submit" disabled={!parsed.ok}>
              Apply
            </button>
          </form>
          {!parsed.ok && (
            <p className="error">
              Filter: {parsed.error} (at character {parsed.at + 1})
            </p>
          )}
          <p className="muted hint">Columns: {Object.keys(info.columns).join(', ')}</p>
          {error && <p className="error">{error}</p>}
          {canQueue && picked.size > 0 && (
            <p>
              <AddToQueue projectId={projectId} objects={[...picked.values()]} />
            </p>
          )}
          <Grid
            className="observations"
            columns={[
              ...HEADERS.map((h) => {
                const col = SORTABLE[h];
                const active = col !== undefined && query?.orderBy === col;
                return col ? (
                  <button key={h} type="button" className="sort" onClick={() => sortBy(col)}>
                    {h} {active ? (query?.order === 'desc' ? '▼' : '▲') : ''}
                  </button>
                ) : (
                  h
                );
              }),
              canQueue && 'Queue',
            ]}
          >
            {rows.map((r) => (
              <ObservationRowView
                key={`${r.traceId}/${r.id}`}
                row={r}
                projectId={projectId}
                picked={picked.has(`${r.traceId}/${r.id}`)}
                onPick={
                  canQueue
                    ? (on) => {
                        const next = new Map(picked);
                        if (on) next.set(`${r.traceId}/${r.id}`, queueObjectOf(r));
                        else next.delete(`${r.traceId}/${r.id}`);
                        setPicked(next);
                      }
                    : undefined
                }
              />
            ))}
          </Grid>
          {rows.length === 0 && !loading && <p className="muted">No observations match.</p>}
          <div className="pager">
            {loading && <span className="muted">Loading…</span>}
            <LoadMore more={paged.more} />
          </div>
        </>
      )}
    </main>
  );
}
