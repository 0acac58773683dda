/** The version 3 traces table: simple filters and numbered pages over the legacy tables. */
import { useEffect, useState } from 'react';
import { Grid } from '../../shared/lists.tsx';
import { type ObservationRow, tracesApi } from './api.ts';
import { HEADERS, ObservationRowView } from './observation-row.tsx';

const LEGACY_FILTERS = { name: 'Trace name', userId: 'User', sessionId: 'Session' } as const;
type LegacyFilter = Record<keyof typeof LEGACY_FILTERS, string>;

export function LegacyTraces({ projectId }: { projectId: string }) {
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
