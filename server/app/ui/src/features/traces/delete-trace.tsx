/** The trace's deletion: queued by an owner, followed until the worker has deleted it. */
import { useEffect, useState } from 'react';
import { navigate } from '../../shared/router.ts';
import { type TraceDeletion, tracesApi } from './api.ts';

/** How often the trace view asks how a deletion under way is doing. */
const DELETION_POLL_MS = 1000;

/**
 * Queues the trace's deletion (as `DELETE /api/public/traces/{id}`), for owners. The worker deletes
 * it in the background: the view shows the deletion under way (also one queued before the page
 * opened, to anyone) and opens the list once it succeeded.
 */
export function DeleteTrace({
  projectId,
  traceId,
  back,
  canDelete,
}: {
  projectId: string;
  traceId: string;
  back: string;
  canDelete: boolean;
}) {
  const [error, setError] = useState<string | undefined>();
  const [deletion, setDeletion] = useState<TraceDeletion | undefined>();
  const [deletionId, setDeletionId] = useState<string | undefined>();

  useEffect(() => {
    let live = true;
    tracesApi.pendingTraceDeletions(projectId, traceId).then(
      (r) => {
        const pending = r.data[0];
        if (!live || !pending) return;
        setDeletion(pending);
        setDeletionId(pending.id);
      },
      // Without the list the view still works; a deletion started here is followed anyway.
      () => {},
    );
    return () => {
      live = false;
    };
  }, [projectId, traceId]);

  useEffect(() => {
    if (!deletionId) return;
    const timer = setInterval(() => {
      tracesApi.traceDeletion(projectId, deletionId).then(
        (d) => {
          setDeletion(d);
          if (d.status === 'succeeded') navigate(back);
          if (d.status === 'succeeded' || d.status === 'failed') clearInterval(timer);
        },
        (err: Error) => setError(err.message),
      );
    }, DELETION_POLL_MS);
    return () => clearInterval(timer);
  }, [projectId, deletionId, back]);

  const remove = () => {
    const asked = `Delete trace ${traceId} with its observations, scores, comments and media? This cannot be undone.`;
    if (!window.confirm(asked)) return;
    setError(undefined);
    tracesApi.deleteTrace(projectId, traceId).then(
      (r) => setDeletionId(r.deletionId),
      (err: Error) => setError(err.message),
    );
  };
  const underway = deletionId !== undefined && deletion?.status !== 'failed';
  return (
    <>
      {deletionId && (
        <p className="notice" role="status">
          {deletion?.status === 'failed'
            ? `Deletion failed: ${deletion.error ?? 'unknown error'}`
            : `Deletion in progress (${deletion?.status ?? 'queued'}): ${deletion?.deletedCount ?? 0} of ${deletion?.traceCount ?? 1} traces deleted`}
        </p>
      )}
      {canDelete && (
        <p>
          <button type="button" className="danger" onClick={remove} disabled={underway}>
            Delete trace
          </button>
          {error && <span className="error"> {error}</span>}
        </p>
      )}
    </>
  );
}
