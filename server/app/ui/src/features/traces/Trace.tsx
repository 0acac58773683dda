/**
 * A trace: its observations as a tree with a waterfall of their timings, the selected one's
 * input and output (chat messages or JSON), usage, cost, metadata, scores and comments, and forms
 * that add a score or a comment (members and owners); owners delete the trace, after confirming.
 */
import { useCallback, useEffect, useState } from 'react';
import { formatCost, formatLatency, formatTokens } from '../../shared/format.ts';
import { navigate } from '../../shared/router.ts';
import { type ProjectInfo, projectsApi } from '../projects/api.ts';
import { type TraceDetail, tracesApi } from './api.ts';
import { DeleteTrace } from './delete-trace.tsx';
import { ObservationDetail } from './observation-detail.tsx';
import { traceBounds, treeOrder, waterfallBar } from './trace-model.ts';

export function Trace({
  projectId,
  traceId,
  readPath,
}: {
  projectId: string;
  traceId: string;
  readPath: 'v3' | 'v4';
}) {
  const [trace, setTrace] = useState<TraceDetail | undefined>();
  const [info, setInfo] = useState<ProjectInfo | undefined>();
  const [selected, setSelected] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();

  const reload = useCallback(async () => {
    try {
      const [t, p] = await Promise.all([
        tracesApi.trace(projectId, traceId, readPath),
        projectsApi.project(projectId),
      ]);
      setTrace(t);
      setInfo(p);
    } catch (e) {
      setError((e as Error).message);
    }
  }, [projectId, traceId, readPath]);
  useEffect(() => {
    void reload();
  }, [reload]);

  if (error) return <main className="error">{error}</main>;
  if (!trace || !info) return <main className="muted">Loading trace…</main>;
  const rows = treeOrder(trace.observations);
  const bounds = traceBounds(trace.observations);
  const current = trace.observations.find((o) => o.id === selected) ?? rows[0]?.node;
  const back = `/project/${encodeURIComponent(projectId)}/observations`;

  return (
    <main>
      <p>
        <a
          href={back}
          onClick={(e) => {
            e.preventDefault();
            navigate(back);
          }}
        >
          ← {info.project.name}
        </a>
      </p>
      <h1>
        Trace <code>{trace.traceId}</code>
      </h1>
      <DeleteTrace
        projectId={projectId}
        traceId={trace.traceId}
        back={back}
        canDelete={info.project.role === 'owner'}
      />
      <p className="trace-totals">
        Trace total: {formatTokens(trace.totals.usageDetails) || '0 tokens'} ·{' '}
        {formatCost(trace.totals.totalCost) || 'no cost'}
      </p>
      {trace.truncated && (
        <p className="notice">This trace is large: its first 1000 observations are shown.</p>
      )}
      <div className="trace">
        <div className="tree">
          {rows.map(({ node, depth }) => {
            const bar = waterfallBar(node, bounds.start, bounds.end);
            return (
              <button
                type="button"
                key={node.id}
                className={`tree-row ${node.id === current?.id ? 'selected' : ''}`}
                onClick={() => setSelected(node.id)}
              >
                <span className="tree-name" style={{ paddingLeft: `${depth * 16}px` }}>
                  <span className="type">{node.type}</span> {node.name}
                </span>
                <span className="waterfall">
                  <span className="bar" style={{ left: `${bar.left}%`, width: `${bar.width}%` }} />
                </span>
                <span className="num">{formatLatency(node.latency)}</span>
              </button>
            );
          })}
        </div>
        {current && (
          <ObservationDetail
            o={current}
            comments={trace.comments.filter(
              (c) =>
                (c.objectType === 'OBSERVATION' && c.objectId === current.id) ||
                (c.objectType === 'TRACE' && current.isRootObservation),
            )}
            canWrite={info.project.role !== 'viewer'}
            projectId={projectId}
            onChange={reload}
          />
        )}
      </div>
    </main>
  );
}
