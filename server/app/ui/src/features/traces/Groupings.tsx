/**
 * The sessions and users lists: one row per session (or user) the project's observations name,
 * newest activity first, with keyset "load more" and a time range. On the version 3 read path
 * the same list comes from the legacy traces (their timestamps are first and last seen).
 */
import { useCallback, useEffect, useState } from 'react';
import { formatCost, formatTime, rangeBounds, TIME_RANGES, type TimeRange } from '../../shared/format.ts';
import { usePaged, usePicked } from '../../shared/hooks.ts';
import { Grid, LoadMore } from '../../shared/lists.tsx';
import { AddToQueue } from '../annotation-queues/add-to-queue.tsx';
import { projectsApi } from '../projects/api.ts';
import type { Deployment } from '../users/api.ts';
import { tracesApi } from './api.ts';

export function Groupings({
  projectId,
  grouping,
  deployment,
}: {
  projectId: string;
  grouping: 'sessions' | 'users';
  deployment: Deployment;
}) {
  const [range, setRange] = useState<TimeRange>('7d');
  // Sessions picked to add to an annotation queue, by members and owners.
  const { picked, pick } = usePicked();
  const [memberOrOwner, setMemberOrOwner] = useState(false);
  useEffect(() => {
    if (grouping !== 'sessions') return;
    projectsApi.project(projectId).then(
      (p) => setMemberOrOwner(p.project.role !== 'viewer'),
      () => setMemberOrOwner(false),
    );
  }, [projectId, grouping]);

  const path = deployment.readPath.path;
  const fetchPage = useCallback(
    (cursor?: string) =>
      tracesApi.groupings(projectId, grouping, path, { cursor, ...rangeBounds(range, Date.now()) }),
    [projectId, grouping, path, range],
  );
  const { rows, error, loading, more } = usePaged(fetchPage);

  const related = grouping === 'sessions' ? 'Users' : 'Sessions';
  const canQueue = memberOrOwner && grouping === 'sessions';
  return (
    <main>
      <h1>{grouping === 'sessions' ? 'Sessions' : 'Users'}</h1>
      {path === 'v3' && (
        <p className="muted">
          Version 3 experience: derived from the traces, first and last seen are trace times.
        </p>
      )}
      <label>
        Time range{' '}
        <select value={range} onChange={(e) => setRange(e.target.value as TimeRange)}>
          {Object.keys(TIME_RANGES).map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      {error && <p className="error">{error}</p>}
      {canQueue && picked.size > 0 && (
        <p>
          <AddToQueue
            projectId={projectId}
            objects={[...picked].map((id) => ({ objectType: 'SESSION' as const, objectId: id }))}
          />
        </p>
      )}
      <Grid
        columns={[
          grouping === 'sessions' ? 'Session' : 'User',
          'First seen',
          'Last seen',
          'Traces',
          'Observations',
          related,
          'Tokens',
          'Cost',
          canQueue && 'Queue',
        ]}
      >
        {rows.map((r) => (
          <tr key={r.id}>
            <td>{r.id}</td>
            <td>{formatTime(r.firstSeen)}</td>
            <td>{formatTime(r.lastSeen)}</td>
            <td>{r.traceCount}</td>
            <td>{r.observationCount}</td>
            <td>{(r.userIds ?? r.sessionIds ?? []).join(', ')}</td>
            <td>
              {r.inputTokens} → {r.outputTokens} (Σ {r.totalTokens})
            </td>
            <td>{formatCost(r.totalCost)}</td>
            {canQueue && (
              // Its own cell, so that the id cell's accessible name stays the id.
              <td>
                <input
                  type="checkbox"
                  aria-label={`Pick ${r.id}`}
                  checked={picked.has(r.id)}
                  onChange={(e) => pick(r.id, e.target.checked)}
                />
              </td>
            )}
          </tr>
        ))}
      </Grid>
      {rows.length === 0 && !loading && <p className="muted">Nothing in this time range.</p>}
      <LoadMore more={more} />
    </main>
  );
}
