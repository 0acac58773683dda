/**
 * Datasets and experiments (read-only): the project's datasets; a dataset's items (input,
 * expected output, metadata) and its runs; and runs side by side, each item's output and scores
 * per run with each run's mean scores. Runs are experiments on the version 4 read path and
 * dataset runs on the version 3 one; the server picks by the user's read path.
 */
import { useEffect, useState } from 'react';
import type { NumberedPage } from '../../shared/api.ts';
import { formatScore, formatTime } from '../../shared/format.ts';
import { Link, traceHref } from '../../shared/link.tsx';
import { Grid } from '../../shared/lists.tsx';
import { renderValue } from '../traces/trace-model.ts';
import { type Dataset, type DatasetItem, type DatasetRun, datasetsApi, type RunComparison } from './api.ts';

/** A JSON value (or stored JSON text) as one compact block. */
function Json({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span className="muted">none</span>;
  const r = renderValue(typeof value === 'string' ? value : JSON.stringify(value));
  if (r.kind === 'empty') return <span className="muted">none</span>;
  if (r.kind === 'chat')
    return <pre className="value">{r.messages.map((m) => `${m.role}: ${m.content}`).join('\n')}</pre>;
  return <pre className="value">{r.text}</pre>;
}

const JsonCell = ({ value }: { value: unknown }) => (
  <td>
    <Json value={value} />
  </td>
);

function Pager({ meta, onPage }: { meta: NumberedPage<unknown>['meta']; onPage: (p: number) => void }) {
  if (meta.totalPages <= 1) return null;
  return (
    <div className="pager">
      <button type="button" disabled={meta.page <= 1} onClick={() => onPage(meta.page - 1)}>
        Previous
      </button>{' '}
      page {meta.page} of {meta.totalPages}{' '}
      <button type="button" disabled={meta.page >= meta.totalPages} onClick={() => onPage(meta.page + 1)}>
        Next
      </button>
    </div>
  );
}

export function Datasets({ projectId }: { projectId: string }) {
  const [page, setPage] = useState(1);
  const [list, setList] = useState<NumberedPage<Dataset> | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    datasetsApi.datasets(projectId, page).then(setList, (e: Error) => setError(e.message));
  }, [projectId, page]);
  if (error) return <main className="error">{error}</main>;
  if (!list) return <main className="muted">Loading…</main>;
  return (
    <main>
      <h1>Datasets</h1>
      {list.data.length === 0 && (
        <p className="muted">No datasets yet: create one through the SDK or the API.</p>
      )}
      <Grid columns={['Name', 'Description', 'Created']}>
        {list.data.map((d) => (
          <tr key={d.id}>
            <td>
              <Link href={`/project/${encodeURIComponent(projectId)}/datasets/${encodeURIComponent(d.id)}`}>
                {d.name}
              </Link>
            </td>
            <td>{d.description ?? ''}</td>
            <td>{formatTime(d.createdAt)}</td>
          </tr>
        ))}
      </Grid>
      <Pager meta={list.meta} onPage={setPage} />
    </main>
  );
}

export function DatasetView({ projectId, datasetId }: { projectId: string; datasetId: string }) {
  const [page, setPage] = useState(1);
  const [data, setData] = useState<
    { dataset: Dataset; items: NumberedPage<DatasetItem>; runs: DatasetRun[] } | undefined
  >();
  const [chosen, setChosen] = useState<string[]>([]);
  const [comparison, setComparison] = useState<RunComparison | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    datasetsApi.dataset(projectId, datasetId, page).then(setData, (e: Error) => setError(e.message));
  }, [projectId, datasetId, page]);
  useEffect(() => {
    if (chosen.length === 0) return setComparison(undefined);
    datasetsApi
      .compareRuns(projectId, datasetId, chosen)
      .then(setComparison, (e: Error) => setError(e.message));
  }, [projectId, datasetId, chosen]);

  if (error) return <main className="error">{error}</main>;
  if (!data) return <main className="muted">Loading…</main>;
  const toggle = (id: string) =>
    setChosen((c) => (c.includes(id) ? c.filter((x) => x !== id) : [...c, id].slice(-2)));

  return (
    <main>
      <p>
        <Link href={`/project/${encodeURIComponent(projectId)}/datasets`}>← datasets</Link>
      </p>
      <h1>{data.dataset.name}</h1>
      {data.dataset.description && <p>{data.dataset.description}</p>}
      <h2>Runs</h2>
      <Grid
        empty={data.runs.length === 0 && 'No runs yet.'}
        columns={['Compare', 'Run', 'Description', 'Started', 'Items']}
      >
        {data.runs.map((r) => (
          <tr key={r.id}>
            <td>
              <input
                type="checkbox"
                aria-label={`Compare ${r.name}`}
                checked={chosen.includes(r.id)}
                onChange={() => toggle(r.id)}
              />
            </td>
            <td>{r.name}</td>
            <td>{r.description ?? ''}</td>
            <td>{formatTime(r.createdAt)}</td>
            <td className="num">{r.itemCount ?? ''}</td>
          </tr>
        ))}
      </Grid>
      {comparison ? (
        <>
          <h2>Results side by side</h2>
          <table className="grid compare">
            <thead>
              <tr>
                <th>Input</th>
                <th>Expected output</th>
                {comparison.runs.map((r, i) => (
                  <th key={r.id}>
                    {r.name}
                    <div className="muted">
                      {Object.entries(comparison.means[i] ?? {})
                        .map(([name, mean]) => `${name} ⌀ ${formatScore(mean)}`)
                        .join(' · ')}
                    </div>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {comparison.rows.map(({ item, results }) => (
                <tr key={item.id}>
                  <JsonCell value={item.input} />
                  <JsonCell value={item.expectedOutput} />
                  {results.map((r, i) => (
                    <td key={comparison.runs[i]!.id}>
                      {r ? (
                        <>
                          <Json value={r.output} />
                          {r.scores.map((s) => (
                            <span key={s.id} className="score">
                              {s.name}: {formatScore(s.value)}
                            </span>
                          ))}{' '}
                          <Link href={traceHref(projectId, r.traceId)}>trace</Link>
                        </>
                      ) : (
                        <span className="muted">not run</span>
                      )}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : (
        <>
          <h2>Items</h2>
          {data.runs.length > 0 && (
            <p className="muted">Tick one or two runs to see their results side by side.</p>
          )}
          <Grid columns={['Id', 'Input', 'Expected output', 'Metadata', 'Status']}>
            {data.items.data.map((it) => (
              <tr key={it.id}>
                <td>
                  <code>{it.id}</code>
                </td>
                <JsonCell value={it.input} />
                <JsonCell value={it.expectedOutput} />
                <JsonCell value={it.metadata} />
                <td>{it.status}</td>
              </tr>
            ))}
          </Grid>
          <Pager meta={data.items.meta} onPage={setPage} />
        </>
      )}
    </main>
  );
}
