/** Dashboards: the list (the built-in home first) and the form that makes one. */
import { useCallback, useEffect, useState } from 'react';
import { navigate } from '../../shared/router.ts';
import { type Dashboard, dashboardsApi } from './api.ts';

const link = (path: string) => ({
  href: path,
  onClick: (e: React.MouseEvent) => {
    e.preventDefault();
    navigate(path);
  },
});

export function Dashboards({ projectId }: { projectId: string }) {
  const [list, setList] = useState<Dashboard[]>([]);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>();
  const base = `/project/${encodeURIComponent(projectId)}/dashboards`;

  const load = useCallback(() => {
    dashboardsApi.dashboards(projectId).then(
      (p) => setList(p.data),
      (e: Error) => setError(e.message),
    );
  }, [projectId]);
  useEffect(load, [load]);

  const create = async (e: React.FormEvent) => {
    e.preventDefault();
    try {
      const d = await dashboardsApi.createDashboard(projectId, { name });
      navigate(`${base}/${encodeURIComponent(d.id)}`);
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <main>
      <h1>Dashboards</h1>
      {error && <p className="error">{error}</p>}
      <table className="grid">
        <thead>
          <tr>
            <th>Name</th>
            <th>Description</th>
            <th className="num">Tiles</th>
            <th>Updated</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>
              <a {...link(`${base}/home`)}>Home</a> <span className="tag">built in</span>
            </td>
            <td>Volume, cost, tokens, latency, levels, scores, top users and sessions</td>
            <td className="num" />
            <td />
          </tr>
          {list.map((d) => (
            <tr key={d.id}>
              <td>
                <a {...link(`${base}/${encodeURIComponent(d.id)}`)}>{d.name}</a>
              </td>
              <td>{d.description}</td>
              <td className="num">{d.definition.widgets.length}</td>
              <td>{d.updatedAt.slice(0, 19).replace('T', ' ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form className="filters" onSubmit={create}>
        <label>
          New dashboard{' '}
          <input value={name} onChange={(e) => setName(e.target.value)} placeholder="name" required />
        </label>
        <button type="submit">Create</button>
      </form>
    </main>
  );
}
