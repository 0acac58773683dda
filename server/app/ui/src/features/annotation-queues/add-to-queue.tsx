/**
 * "Add to queue": puts traces, observations or sessions picked in a table or a trace into one of
 * the project's annotation queues (members and owners; the server refuses viewers); objects already
 * in the queue are skipped.
 */
import { useEffect, useState } from 'react';
import { type QueueObject, type QueueOverview, queuesApi } from './api.ts';

export function AddToQueue({ projectId, objects }: { projectId: string; objects: QueueObject[] }) {
  const [queues, setQueues] = useState<QueueOverview['queues'] | undefined>();
  const [queueId, setQueueId] = useState('');
  const [message, setMessage] = useState<{ text: string; error?: boolean } | undefined>();
  useEffect(() => {
    queuesApi.queueOverview(projectId).then(
      (o) => {
        setQueues(o.queues);
        setQueueId((current) => current || (o.queues[0]?.id ?? ''));
      },
      (e: Error) => setMessage({ text: e.message, error: true }),
    );
  }, [projectId]);
  if (!queues || queues.length === 0) return null;
  const add = async () => {
    setMessage(undefined);
    try {
      const { added, skipped } = await queuesApi.addToQueue(projectId, queueId, objects);
      const name = queues.find((q) => q.id === queueId)?.name;
      setMessage({ text: `Added ${added} to ${name}${skipped ? ` (${skipped} already in it)` : ''}` });
    } catch (e) {
      setMessage({ text: (e as Error).message, error: true });
    }
  };
  return (
    <span className="add-to-queue">
      <select aria-label="Annotation queue" value={queueId} onChange={(e) => setQueueId(e.target.value)}>
        {queues.map((q) => (
          <option key={q.id} value={q.id}>
            {q.name}
          </option>
        ))}
      </select>{' '}
      <button type="button" disabled={objects.length === 0} onClick={() => void add()}>
        Add {objects.length === 1 ? objects[0]!.objectType.toLowerCase() : `${objects.length} selected`} to
        queue
      </button>{' '}
      {message && <span className={message.error ? 'error' : 'muted'}>{message.text}</span>}
    </span>
  );
}
