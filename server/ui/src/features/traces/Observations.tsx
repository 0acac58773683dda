/**
 * The observations table: one row per trace by default (the `isRootObservation = true` filter
 * the bar starts with), the filter bar in the API v2 filter language, full-text search with the
 * match shown under its row, a time range, sortable columns and keyset "load more". Users on the
 * version 3 read path get its traces table instead, over the legacy tables, with the simple
 * filters and numbered pages of the version 3 experience.
 */
import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { type FilterCondition, parseFilterText } from '../../shared/filter-syntax.ts';
import {
  formatCost,
  formatLatency,
  formatScore,
  formatTime,
  formatTokens,
  rangeBounds,
  TIME_RANGES,
  type TimeRange,
} from '../../shared/format.ts';
import { usePaged } from '../../shared/hooks.ts';
import { traceHref } from '../../shared/link.tsx';
import { Grid, LoadMore, WordsCell } from '../../shared/lists.tsx';
import { navigate } from '../../shared/router.ts';
import { AddToQueue } from '../annotation-queues/add-to-queue.tsx';
import type { QueueObject } from '../annotation-queues/api.ts';
import { type ProjectInfo, projectsApi } from '../projects/api.ts';
import type { Deployment } from '../users/api.ts';
import { type ObservationRow, tracesApi } from './api.ts';

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
const HEADERS = [
  'Name',
  'Type',
  'Start time',
  'Latency',
  'Model',
  'Tokens',
  'Cost',
  'User',
  'Session',
  'Tags',
  'Level',
  'Scores',
];

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

const LEGACY_FILTERS = { name: 'Trace name', userId: 'User', sessionId: 'Session' } as const;
type LegacyFilter = Record<keyof typeof LEGACY_FILTERS, string>;

function LegacyTraces({ projectId }: { projectId: string }) {
  const empty: LegacyFilter = { name: '', userId: '', sessionId: '' };
  const [draft, setDraft] = useState<LegacyFilter>(empty);
  const [filter, setFilter] = useState<LegacyFilter>(empty);
  const [page, setPage] = useState(1);
  const [rows, setRows] = useState<ObservationRow[]>([]);
  const [pages, setPages] = useState(0);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    tracesApi.legacyTraces(projectId, { ...filter, page: String(page) }).then(
      (r) => {
        setRows(r.data);
        setPages(r.meta.totalPages);
        setError(undefined);
      },
      (e: Error) => setError(e.message),
    );
  }, [projectId, filter, page]);
  return (
    <>
      <p className="muted">Version 3 experience: traces from the traces and observations tables.</p>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setPage(1);
          setFilter(draft);
        }}
      >
        {(Object.keys(LEGACY_FILTERS) as (keyof LegacyFilter)[]).map((k) => (
          <input
            key={k}
            aria-label={LEGACY_FILTERS[k]}
            placeholder={LEGACY_FILTERS[k]}
            value={draft[k]}
            onChange={(e) => setDraft({ ...draft, [k]: e.target.value })}
          />
        ))}
        <button type="submit">Apply</button>
      </form>
      {error && <p className="error">{error}</p>}
      <Grid className="observations" columns={HEADERS}>
        {rows.map((r) => (
          <ObservationRowView key={r.id} row={r} projectId={projectId} />
        ))}
      </Grid>
      {rows.length === 0 && <p className="muted">No traces match.</p>}
      <div className="pager">
        <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Previous
        </button>{' '}
        page {page} of {Math.max(pages, 1)}{' '}
        <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </div>
    </>
  );
}

/** A root row's total over its whole trace, under the observation's own value. */
function TraceTotal({ text }: { text: string }) {
  return (
    <div className="trace-total" title="Total over the trace's observations">
      trace Σ {text || '–'}
    </div>
  );
}

function ObservationRowView({
  row: r,
  projectId,
  picked,
  onPick,
}: {
  row: ObservationRow;
  projectId: string;
  /** Where rows can be picked (to add them to an annotation queue): whether this one is. */
  picked?: boolean;
  onPick?: (picked: boolean) => void;
}) {
  const href = traceHref(projectId, r.traceId);
  return (
    <>
      <tr className={`level-${r.level.toLowerCase()}`}>
        <td title={r.id}>
          <a
            href={href}
            onClick={(e) => {
              e.preventDefault();
              navigate(href);
            }}
          >
            {r.name || '(unnamed)'}
          </a>
        </td>
        <td>{r.type}</td>
        <td>{formatTime(r.startTime)}</td>
        <td className="num">{formatLatency(r.latency)}</td>
        <td>{r.model ?? ''}</td>
        <td className="num">
          {formatTokens(r.usageDetails)}
          {r.traceTotals && <TraceTotal text={formatTokens(r.traceTotals.usageDetails)} />}
        </td>
        <td className="num">
          {formatCost(r.totalCost)}
          {r.traceTotals && <TraceTotal text={formatCost(r.traceTotals.totalCost)} />}
        </td>
        <td>{r.userId ?? ''}</td>
        <td>{r.sessionId ?? ''}</td>
        <WordsCell words={r.tags} className="tag" />
        <td>{r.level}</td>
        <td>
          {r.scores.map((s) => (
            <span key={s.id} className="score" title={s.comment ?? undefined}>
              {s.name}: {formatScore(s.value)}
              {s.source === 'EVAL' && <span className="score-source"> (eval)</span>}
            </span>
          ))}
        </td>
        {onPick && (
          // Its own cell, so that the name cell's accessible name stays the name.
          <td>
            <input
              type="checkbox"
              aria-label={`Pick ${r.name || r.id}`}
              checked={picked}
              onChange={(e) => onPick(e.target.checked)}
            />
          </td>
        )}
      </tr>
      {r.match && (
        <tr className="match">
          <td colSpan={HEADERS.length + (onPick ? 1 : 0)}>
            <span className="muted">{r.match.field}: </span>
            {r.match.before}
            <mark>{r.match.match}</mark>
            {r.match.after}
          </td>
        </tr>
      )}
    </>
  );
}
