/**
 * Annotation queues: the project's queues with their progress and a form that makes one with a set
 * of score configs.
 */
import { useCallback, useEffect, useState } from 'react';
import { formatTime } from '../../shared/format.ts';
import { usePicked, useWrite } from '../../shared/hooks.ts';
import { Link } from '../../shared/link.tsx';
import { Grid } from '../../shared/lists.tsx';
import { type Project, projectsApi } from '../projects/api.ts';
import { type QueueOverview, queuesApi, type ScoreConfig } from './api.ts';

export const queuePath = (projectId: string, queueId?: string) =>
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
