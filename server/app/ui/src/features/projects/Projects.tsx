/**
 * The user's organizations and projects; landing on `/` with only one project goes straight to its
 * observations. Owners create organizations and projects, rename them, and delete a project after
 * typing its name.
 */
import { useEffect, useState } from 'react';
import { Link } from '../../shared/link.tsx';
import { Grid } from '../../shared/lists.tsx';
import { navigate } from '../../shared/router.ts';
import { type Organization, type Project, projectsApi } from './api.ts';
import {
  ConfirmDelete,
  NameForm,
  NewProjectForm,
  RenameForm,
  RetentionForm,
  retentionText,
} from './project-forms.tsx';

export function Projects({ landing }: { landing: boolean }) {
  const [projects, setProjects] = useState<Project[] | undefined>();
  const [organizations, setOrganizations] = useState<Organization[]>([]);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    // A user who moved on before the list arrived is not sent back to a project.
    let left = false;
    projectsApi.projects().then(
      (r) => {
        if (left) return;
        const only = r.data.length === 1 ? r.data[0] : undefined;
        if (landing && only) navigate(`/project/${encodeURIComponent(only.id)}/observations`);
        else setProjects(r.data);
      },
      (e: Error) => !left && setError(e.message),
    );
    projectsApi.organizations().then(
      (r) => !left && setOrganizations(r.data),
      (e: Error) => !left && setError(e.message),
    );
    return () => {
      left = true;
    };
  }, [landing]);

  if (error) return <main className="error">{error}</main>;
  if (!projects) return <main className="muted">Loading projects…</main>;
  const replace = (p: Project) => setProjects(projects.map((q) => (q.id === p.id ? p : q)));
  const renameOrg = (o: Organization) => {
    setOrganizations(organizations.map((x) => (x.id === o.id ? o : x)));
    setProjects(
      projects.map((p) =>
        p.organization.id === o.id ? { ...p, organization: { id: o.id, name: o.name } } : p,
      ),
    );
  };
  const owned = organizations.filter((o) => o.role === 'owner');
  return (
    <main>
      <h1>Organizations</h1>
      {organizations.length > 0 && (
        <Grid label="Organizations" columns={['Organization', 'Your role', 'Manage']}>
          {organizations.map((o) => (
            <tr key={o.id}>
              <td>
                {o.role === 'owner' ? (
                  <RenameForm
                    label={`Name of organization ${o.name}`}
                    name={o.name}
                    save={async (name) =>
                      renameOrg((await projectsApi.renameOrganization(o.id, name)).organization)
                    }
                  />
                ) : (
                  o.name
                )}
              </td>
              <td>{o.role}</td>
              <td>
                {o.role === 'owner' &&
                  o.id !== 'default' &&
                  !projects.some((p) => p.organization.id === o.id) && (
                    <ConfirmDelete
                      kind="organization"
                      name={o.name}
                      warning="It holds no project; its members and organization keys go with it."
                      remove={(typed) => projectsApi.deleteOrganization(o.id, typed)}
                      onDeleted={() => setOrganizations(organizations.filter((x) => x.id !== o.id))}
                    />
                  )}
              </td>
            </tr>
          ))}
        </Grid>
      )}
      <NameForm
        label="New organization"
        button="Create organization"
        create={async (name) =>
          setOrganizations([...organizations, (await projectsApi.createOrganization(name)).organization])
        }
      />
      <h1>Projects</h1>
      {owned.length > 0 && (
        <NewProjectForm organizations={owned} onCreated={(p) => setProjects([...projects, p])} />
      )}
      {projects.length === 0 && <p className="muted">You are not a member of any project yet.</p>}
      <Grid label="Projects" columns={['Organization', 'Project', 'Your role', 'Data retention', 'Manage']}>
        {projects.map((p) => (
          <tr key={p.id}>
            <td>{p.organization.name}</td>
            <td>
              <Link href={`/project/${encodeURIComponent(p.id)}/observations`}>{p.name}</Link>
            </td>
            <td>{p.role}</td>
            <td>{p.role === 'owner' ? <RetentionForm project={p} onSaved={replace} /> : retentionText(p)}</td>
            <td>
              {p.role === 'owner' && (
                <>
                  <RenameForm
                    label={`Name of project ${p.name}`}
                    name={p.name}
                    save={async (name) => replace((await projectsApi.renameProject(p.id, name)).project)}
                  />
                  <ConfirmDelete
                    kind="project"
                    name={p.name}
                    warning="Its keys stop at once and all its data is removed."
                    remove={(typed) => projectsApi.deleteProject(p.id, typed)}
                    onDeleted={() => setProjects(projects.filter((q) => q.id !== p.id))}
                  />
                </>
              )}
            </td>
          </tr>
        ))}
      </Grid>
    </main>
  );
}
