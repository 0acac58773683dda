/**
 * Annotation queues: the project's queues with their progress and a form that makes one with a set
 * of score configs; and a queue's review, which walks its items oldest first, shows each object (a
 * trace, an observation, a session), writes one ANNOTATION score per filled config with the
 * signed-in reviewer as author and marks the item completed, then moves to the next pending one.
 * Members are assigned to a queue on the same page, where members and owners also rename it or
 * delete it (after confirming).
 */
import { type FormEvent, type ReactNode, useCallback, useEffect, useState } from 'react';
import { formatScore, formatTime } from '../../shared/format.ts';
import { usePicked, useWrite } from '../../shared/hooks.ts';
import { Link, traceHref } from '../../shared/link.tsx';
import { Grid } from '../../shared/lists.tsx';
import { navigate } from '../../shared/router.ts';
import { type Project, projectsApi } from '../projects/api.ts';
import { type ObservationRow, type TraceDetail, tracesApi } from '../traces/api.ts';
import { InputOutput } from '../traces/observation-detail.tsx';
import { type QueueOverview, type QueueReview, queuesApi, type ScoreConfig } from './api.ts';
import { ConfigValueInput } from './config-value-input.tsx';

const queuePath = (projectId: string, queueId?: string) =>
  `/project/${encodeURIComponent(projectId)}/annotation-queues${queueId ? `/${encodeURIComponent(queueId)}` : ''}`;

export function Queues({ projectId }: { projectId: string }) {
  const [overview, setOverview] = useState<QueueOverview | undefined>();
  const [configs, setConfigs] = useState<ScoreConfig[]>([]);
  const [project, setProject] = useState<Project | undefined>();
  const [error, setError] = useState<string | undefined>();
  const reload = useCallback(async () => {
    try {
      const [o, c, p] = await Promise.all([
        queuesApi.queueOverview(projectId),
        queuesApi.scoreConfigs(projectId),
        projectsApi.project(projectId),
      ]);
      setOverview(o);
      setConfigs(c.data);
      setProject(p.project);
    } catch (e) {
      setError((e as Error).message);
    }
  }, [projectId]);
  useEffect(() => {
    void reload();
  }, [reload]);
  if (error) return <main className="error">{error}</main>;
  if (!overview || !project) return <main className="muted">Loading…</main>;
  const configName = (id: string) => configs.find((c) => c.id === id)?.name ?? id;
  return (
    <main>
      <h1>Annotation queues</h1>
      <Grid
        empty={overview.queues.length === 0 && 'No queues yet.'}
        label="Annotation queues"
        className="queues"
        columns={['Queue', 'Description', 'Score configs', 'Pending', 'Completed', 'Created']}
      >
        {overview.queues.map((q) => (
          <tr key={q.id}>
            <td>
              <Link href={queuePath(projectId, q.id)}>{q.name}</Link>
            </td>
            <td>{q.description ?? ''}</td>
            <td>{q.scoreConfigIds.map(configName).join(', ')}</td>
            <td className="num">{q.pending}</td>
            <td className="num">{q.completed}</td>
            <td>{formatTime(q.createdAt)}</td>
          </tr>
        ))}
      </Grid>
      {project.role !== 'viewer' && <CreateQueue projectId={projectId} configs={configs} onDone={reload} />}
    </main>
  );
}

function CreateQueue({
  projectId,
  configs,
  onDone,
}: {
  projectId: string;
  configs: ScoreConfig[];
  onDone: () => Promise<void>;
}) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const { picked: chosen, pick, clear } = usePicked();
  const { error, onSubmit } = useWrite(async () => {
    await queuesApi.createQueue(projectId, {
      name,
      ...(description ? { description } : {}),
      scoreConfigIds: configs.filter((c) => chosen.has(c.id)).map((c) => c.id),
    });
    setName('');
    setDescription('');
    clear();
    await onDone();
  });
  if (configs.length === 0) {
    return <p className="muted">A queue scores with score configs: create one first (score configs API).</p>;
  }
  return (
    <form className="create-queue" aria-label="New annotation queue" onSubmit={onSubmit}>
      <h2>New queue</h2>
      <input
        aria-label="Queue name"
        placeholder="name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        required
      />
      <input
        aria-label="Queue description"
        placeholder="description"
        value={description}
        onChange={(e) => setDescription(e.target.value)}
      />
      <fieldset>
        <legend>Score configs</legend>
        {configs.map((c) => (
          <label key={c.id}>
            <input
              type="checkbox"
              checked={chosen.has(c.id)}
              onChange={(e) => pick(c.id, e.target.checked)}
            />{' '}
            {c.name} <span className="muted">{c.dataType.toLowerCase()}</span>
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={chosen.size === 0}>
        Create queue
      </button>
      {error && <p className="error">{error}</p>}
    </form>
  );
}

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

/** Renames the queue, or deletes it with its items and assignments (its scores stay). */
function QueueActions({
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

function Assignments({
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

type ScoreTarget = { traceId: string; observationId?: string } | { sessionId: string };

/**
 * The item's object, loaded on the user's read path, and where a score on it is attached (passed
 * to `children`): a trace's scores on the trace, an observation's on it, a session's on the session.
 */
function ReviewObject({
  projectId,
  item,
  readPath,
  children,
}: {
  projectId: string;
  item: QueueReview['items'][number];
  readPath: 'v3' | 'v4';
  children: (target: ScoreTarget) => ReactNode;
}) {
  const [loaded, setLoaded] = useState<
    { trace?: TraceDetail; observationId?: string; session?: ObservationRow[] } | undefined
  >();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    setLoaded(undefined);
    setError(undefined);
    const load = async () => {
      if (item.objectType === 'TRACE')
        return { trace: await tracesApi.trace(projectId, item.objectId, readPath) };
      const column = item.objectType === 'OBSERVATION' ? 'id' : 'sessionId';
      const rows = await tracesApi.observations(projectId, {
        filter: JSON.stringify([{ type: 'string', column, operator: '=', value: item.objectId }]),
        limit: '100',
      });
      if (item.objectType === 'SESSION') return { session: rows.data };
      const row = rows.data[0];
      if (!row) throw new Error(`observation ${item.objectId} not found`);
      return { trace: await tracesApi.trace(projectId, row.traceId, readPath), observationId: row.id };
    };
    load().then(setLoaded, (e: Error) => setError(e.message));
  }, [projectId, item.objectType, item.objectId, readPath]);
  if (error) return <p className="error">{error}</p>;
  if (!loaded) return <p className="muted">Loading {item.objectType.toLowerCase()}…</p>;
  if (loaded.session) {
    return (
      <>
        <ul className="session-observations">
          {loaded.session.map((o) => (
            <li key={o.id}>
              <span className="type">{o.type}</span> {o.name}{' '}
              <span className="muted">{formatTime(o.startTime)}</span>{' '}
              <Link href={traceHref(projectId, o.traceId)}>trace</Link>
            </li>
          ))}
        </ul>
        {children({ sessionId: item.objectId })}
      </>
    );
  }
  const trace = loaded.trace!;
  const shown =
    trace.observations.find((o) => o.id === loaded.observationId) ??
    trace.observations.find((o) => o.isRootObservation) ??
    trace.observations[0];
  return (
    <>
      {shown && (
        <div className="review-object">
          <p>
            <span className="type">{shown.type}</span> {shown.name}{' '}
            <span className="muted">{formatTime(shown.startTime)}</span>{' '}
            <Link href={traceHref(projectId, trace.traceId)}>open trace</Link>
          </p>
          <InputOutput o={shown} />
          <h3>Scores</h3>
          {shown.scores.length === 0 && <p className="muted">none</p>}
          {shown.scores.map((s) => (
            <span key={s.id} className="score">
              {s.name}: {formatScore(s.value)}
            </span>
          ))}
        </div>
      )}
      {children(
        loaded.observationId
          ? { traceId: trace.traceId, observationId: loaded.observationId }
          : { traceId: trace.traceId },
      )}
    </>
  );
}

/** One value per queue config (those left empty are not scored), then the item is completed. */
function ScoreAndComplete({
  configs,
  completed,
  write,
}: {
  configs: ScoreConfig[];
  completed: boolean;
  write: (values: [ScoreConfig, number | string][]) => Promise<void>;
}) {
  const [values, setValues] = useState<Record<string, string>>({});
  const { error, onSubmit } = useWrite(async () => {
    await write(
      configs
        .filter((c) => (values[c.id] ?? '') !== '')
        .map((c): [ScoreConfig, number | string] => [
          c,
          c.dataType === 'NUMERIC' ? Number(values[c.id]) : values[c.id]!,
        ]),
    );
    setValues({});
  });
  return (
    <form
      className="score-and-complete"
      aria-label="Score and complete"
      onSubmit={(e: FormEvent) => void onSubmit(e)}
    >
      {configs.map((c) => (
        <span key={c.id} className="config-field">
          {c.name}{' '}
          <ConfigValueInput
            config={c}
            value={values[c.id] ?? ''}
            onChange={(v) => setValues({ ...values, [c.id]: v })}
            label={`Score ${c.name}`}
          />
        </span>
      ))}
      <button type="submit">{completed ? 'Score again' : 'Complete'}</button>
      {error && <p className="error">{error}</p>}
    </form>
  );
}
