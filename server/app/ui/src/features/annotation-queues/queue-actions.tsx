/** The review page's queue controls: rename or delete the queue, assign members to it. */
import { useState } from 'react';
import { useWrite } from '../../shared/hooks.ts';
import { navigate } from '../../shared/router.ts';
import { type QueueReview, queuesApi } from './api.ts';
import { queuePath } from './Queues.tsx';

/** Renames the queue, or deletes it with its items and assignments (its scores stay). */
export function QueueActions({
  projectId,
  review,
  onChange,
}: {
  projectId: string;
  review: QueueReview;
  onChange: () => Promise<unknown>;
}) {
  const [name, setName] = useState(review.queue.name);
  const { error, onSubmit } = useWrite(async () => {
    await queuesApi.changeQueue(projectId, review.queue.id, { name });
    await onChange();
  });
  const [deleteError, setDeleteError] = useState<string | undefined>();
  const remove = () => {
    const asked = `Delete the queue ${review.queue.name} with its ${review.items.length} items? Scores written stay.`;
    if (!window.confirm(asked)) return;
    queuesApi.deleteQueue(projectId, review.queue.id).then(
      () => navigate(queuePath(projectId)),
      (e: Error) => setDeleteError(e.message),
    );
  };
  return (
    <form onSubmit={onSubmit} className="inline">
      <input aria-label="Queue name" value={name} onChange={(e) => setName(e.target.value)} required />
      <button type="submit">Rename</button>
      <button type="button" className="danger" onClick={remove}>
        Delete queue
      </button>
      {(error ?? deleteError) && <span className="error">{error ?? deleteError}</span>}
    </form>
  );
}

export function Assignments({
  projectId,
  review,
  canWrite,
  onChange,
}: {
  projectId: string;
  review: QueueReview;
  canWrite: boolean;
  onChange: () => Promise<unknown>;
}) {
  const assigned = new Set(review.assignees.map((a) => a.id));
  const others = review.members.filter((m) => !assigned.has(m.id));
  const [userId, setUserId] = useState('');
  const { error, onSubmit } = useWrite(async () => {
    await queuesApi.assignQueue(projectId, review.queue.id, userId || others[0]!.id, true);
    setUserId('');
    await onChange();
  });
  const remove = async (id: string) => {
    await queuesApi.assignQueue(projectId, review.queue.id, id, false);
    await onChange();
  };
  return (
    <div className="assignments">
      <span>Assigned: </span>
      {review.assignees.length === 0 && <span className="muted">nobody</span>}
      {review.assignees.map((a) => (
        <span key={a.id} className="tag">
          {a.email}
          {canWrite && (
            <button type="button" aria-label={`Unassign ${a.email}`} onClick={() => void remove(a.id)}>
              ×
            </button>
          )}
        </span>
      ))}
      {canWrite && others.length > 0 && (
        <form onSubmit={onSubmit} className="inline">
          <select
            aria-label="Member"
            value={userId || others[0]!.id}
            onChange={(e) => setUserId(e.target.value)}
          >
            {others.map((m) => (
              <option key={m.id} value={m.id}>
                {m.email}
              </option>
            ))}
          </select>
          <button type="submit">Assign</button>
          {error && <span className="error">{error}</span>}
        </form>
      )}
    </div>
  );
}
