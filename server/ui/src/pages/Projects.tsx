import { type FormEvent, useEffect, useState } from 'react';
import { api, type Project } from '../api.ts';
import { navigate } from '../router.ts';

/** The user's projects; landing on `/` with only one goes straight to its observations. */
export function Projects({ landing }: { landing: boolean }) {
  const [projects, setProjects] = useState<Project[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    // A user who moved on before the list arrived is not sent back to a project.
    let left = false;
    api.projects().then(
      (r) => {
        if (left) return;
        const only = r.data.length === 1 ? r.data[0] : undefined;
        if (landing && only) navigate(`/project/${encodeURIComponent(only.id)}/observations`);
        else setProjects(r.data);
      },
      (e: Error) => !left && setError(e.message),
    );
    return () => {
      left = true;
    };
  }, [landing]);

  if (error) return <main className="error">{error}</main>;
  if (!projects) return <main className="muted">Loading projects…</main>;
  const replace = (p: Project) => setProjects(projects.map((q) => (q.id === p.id ? p : q)));
  return (
    <main>
      <h1>Projects</h1>
      {projects.length === 0 && <p className="muted">You are not a member of any project yet.</p>}
      <table className="grid">
        <thead>
          <tr>
            <th>Organization</th>
            <th>Project</th>
            <th>Your role</th>
            <th>Data retention</th>
          </tr>
        </thead>
        <tbody>
          {projects.map((p) => (
            <tr key={p.id}>
              <td>{p.organization.name}</td>
              <td>
                <a
                  href={`/project/${encodeURIComponent(p.id)}/observations`}
                  onClick={(e) => {
                    e.preventDefault();
                    navigate(`/project/${encodeURIComponent(p.id)}/observations`);
                  }}
                >
                  {p.name}
                </a>
              </td>
              <td>{p.role}</td>
              <td>
                {p.role === 'owner' ? <RetentionForm project={p} onSaved={replace} /> : retentionText(p)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}

const retentionText = (p: Project) => (p.retentionDays ? `${p.retentionDays} days` : 'forever');

/** Owners set the days a project keeps its data; empty or 0 keeps it forever. */
function RetentionForm({ project, onSaved }: { project: Project; onSaved: (p: Project) => void }) {
  const [days, setDays] = useState(project.retentionDays ? String(project.retentionDays) : '');
  const [error, setError] = useState<string | undefined>();
  const save = (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    api.setRetention(project.id, days.trim() === '' ? null : Number(days)).then(
      (r) => onSaved(r.project),
      (err: Error) => setError(err.message),
    );
  };
  return (
    <form onSubmit={save} aria-label={`Data retention of ${project.name}`}>
      <input
        type="number"
        min={0}
        value={days}
        placeholder="forever"
        aria-label="Retention in days"
        onChange={(e) => setDays(e.target.value)}
      />{' '}
      <button type="submit">Save</button> <span className="muted">{retentionText(project)}</span>
      {error && (
        <span className="error" role="alert">
          {' '}
          {error}
        </span>
      )}
    </form>
  );
}
