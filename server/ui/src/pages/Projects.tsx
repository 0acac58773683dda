import { useEffect, useState } from 'react';
import { api, type Project } from '../api.ts';
import { navigate } from '../router.ts';

export function Projects() {
  const [projects, setProjects] = useState<Project[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    api.projects().then(
      (r) => setProjects(r.data),
      (e: Error) => setError(e.message),
    );
  }, []);

  if (error) return <main className="error">{error}</main>;
  if (!projects) return <main className="muted">Loading projects…</main>;
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
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}
