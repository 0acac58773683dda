/**
 * A queue's review, which walks its items oldest first, shows each object (a trace, an observation,
 * a session), writes one ANNOTATION score per filled config with the signed-in reviewer as author
 * and marks the item completed, then moves to the next pending one. Members are assigned to a queue
 * on the same page, where members and owners also rename it or delete it (after confirming).
 */
import { useCallback, useEffect, useState } from 'react';
import { formatTime } from '../../shared/format.ts';
import { Link } from '../../shared/link.tsx';
import { Grid } from '../../shared/lists.tsx';
import { type Project, projectsApi } from '../projects/api.ts';
import { type QueueReview, queuesApi, type ScoreConfig } from './api.ts';
import { queuePath } from './Queues.tsx';
import { Assignments, QueueActions } from './queue-actions.tsx';
import { ReviewObject, ScoreAndComplete } from './review-object.tsx';

export function QueueReviewPage({
  projectId,
  queueId,
  readPath,
}: {
  projectId: string;
  queueId: string;
  readPath: 'v3' | 'v4';
}) {
  const [review, setReview] = useState<QueueReview | undefined>();
  const [configs, setConfigs] = useState<ScoreConfig[]>([]);
  const [project, setProject] = useState<Project | undefined>();
  const [current, setCurrent] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const reload = useCallback(async () => {
    try {
      const [r, c, p] = await Promise.all([
        queuesApi.queueReview(projectId, queueId),
        queuesApi.scoreConfigs(projectId),
        projectsApi.project(projectId),
      ]);
      setReview(r);
      setConfigs(c.data.filter((config) => r.queue.scoreConfigIds.includes(config.id)));
      setProject(p.project);
      return r;
    } catch (e) {
      setError((e as Error).message);
      return undefined;
    }
  }, [projectId, queueId]);
  useEffect(() => {
    void reload().then((r) => setCurrent(r?.items.find((i) => i.status === 'PENDING')?.id));
  }, [reload]);
  if (error) return <main className="error">{error}</main>;
  if (!review || !project) return <main className="muted">Loading queue…</main>;
  const { queue, items } = review;
  const index = items.findIndex((i) => i.id === current);
  const item = items[index];
  const done = items.filter((i) => i.status === 'COMPLETED').length;
  const canWrite = project.role !== 'viewer';
  /** The next pending item after the current one, wrapping around. */
  const nextPending = (after: number) =>
    [...items.slice(after + 1), ...items.slice(0, after + 1)].find(
      (i) => i.status === 'PENDING' && i.id !== items[after]?.id,
    );
  return (
    <main>
      <p>
        <Link href={queuePath(projectId)}>← Annotation queues</Link>
      </p>
      <h1>
        {queue.name}{' '}
        <span className="muted queue-progress">
          {done} of {items.length} completed
        </span>
      </h1>
      {queue.description && <p>{queue.description}</p>}
      {canWrite && <QueueActions projectId={projectId} review={review} onChange={reload} />}
      <Assignments projectId={projectId} review={review} canWrite={canWrite} onChange={reload} />
      {items.length === 0 && (
        <p className="muted">
          This queue has no items: add traces, observations or sessions from their tables.
        </p>
      )}
      {item ? (
        <section className="review-item" aria-label="Current item">
          <h2>
            Item {index + 1} of {items.length}: {item.objectType.toLowerCase()} <code>{item.objectId}</code>{' '}
            <span className={`status status-${item.status.toLowerCase()}`}>{item.status}</span>
          </h2>
          {item.status === 'COMPLETED' && (
            <p className="muted">
              Completed {item.completedAt ? formatTime(item.completedAt) : ''}
              {item.annotatorEmail ? ` by ${item.annotatorEmail}` : ''}
            </p>
          )}
          <ReviewObject projectId={projectId} item={item} readPath={readPath}>
            {(target) =>
              canWrite && (
                <ScoreAndComplete
                  key={item.id}
                  configs={configs}
                  completed={item.status === 'COMPLETED'}
                  write={async (values) => {
                    for (const [config, value] of values) {
                      await queuesApi.addScore(projectId, {
                        ...target,
                        queueId: queue.id,
                        configId: config.id,
                        name: config.name,
                        value,
                      });
                    }
                    await queuesApi.setQueueItemStatus(projectId, queue.id, item.id, 'COMPLETED');
                    await reload();
                    setCurrent(nextPending(index)?.id);
                  }}
                />
              )
            }
          </ReviewObject>
          <p>
            <button type="button" disabled={index <= 0} onClick={() => setCurrent(items[index - 1]?.id)}>
              Previous
            </button>{' '}
            <button
              type="button"
              disabled={index >= items.length - 1}
              onClick={() => setCurrent(items[index + 1]?.id)}
            >
              Next
            </button>
          </p>
        </section>
      ) : (
        items.length > 0 && (
          <p className="notice">
            All items completed.{' '}
            <button type="button" onClick={() => setCurrent(items[0]?.id)}>
              Review from the start
            </button>
          </p>
        )
      )}
      <Grid label="Queue items" className="queue-items" columns={['#', 'Object', 'Status', 'Completed by']}>
        {items.map((i, n) => (
          <tr key={i.id} className={i.id === current ? 'selected' : ''}>
            <td>
              <button type="button" onClick={() => setCurrent(i.id)}>
                {n + 1}
              </button>
            </td>
            <td>
              {i.objectType.toLowerCase()} <code>{i.objectId}</code>
            </td>
            <td>{i.status}</td>
            <td>{i.annotatorEmail ?? ''}</td>
          </tr>
        ))}
      </Grid>
    </main>
  );
}
