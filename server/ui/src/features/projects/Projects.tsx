import { type FormEvent, useEffect, useState } from 'react';
import { useWrite } from '../../shared/hooks.ts';
import { Link } from '../../shared/link.tsx';
import { Grid } from '../../shared/lists.tsx';
import { navigate } from '../../shared/router.ts';
import { type Organization, type Project, projectsApi } from './api.ts';

/**
 * The user's organizations and projects; landing on `/` with only one project goes straight to its
 * observations. Owners create organizations and projects, rename them, and delete a project after
 * typing its name.
 */
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

const retentionText = (p: Project) => (p.retentionDays ? `${p.retentionDays} days` : 'forever');

/** Owners set the days a project keeps its data; empty or 0 keeps it forever. */
function RetentionForm({ project, onSaved }: { project: Project; onSaved: (p: Project) => void }) {
  const [days, setDays] = useState(project.retentionDays ? String(project.retentionDays) : '');
  const [error, setError] = useState<string | undefined>();
  const save = (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    projectsApi.setRetention(project.id, days.trim() === '' ? null : Number(days)).then(
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
      <InlineError error={error} />
    </form>
  );
}

/** A one-field form that creates something named. */
function NameForm({
  label,
  button,
  create,
}: {
  label: string;
  button: string;
  create: (name: string) => Promise<void>;
}) {
  const [name, setName] = useState('');
  const { error, busy, onSubmit } = useWrite(async () => {
    await create(name);
    setName('');
  });
  return (
    <form onSubmit={onSubmit} aria-label={label}>
      <input
        value={name}
        placeholder="Name"
        aria-label={`${label} name`}
        onChange={(e) => setName(e.target.value)}
      />{' '}
      <button type="submit" disabled={busy || name.trim() === ''}>
        {button}
      </button>
      <InlineError error={error} />
    </form>
  );
}

/** A new project in one of the organizations the user owns. */
function NewProjectForm({
  organizations,
  onCreated,
}: {
  organizations: Organization[];
  onCreated: (p: Project) => void;
}) {
  const [orgId, setOrgId] = useState(organizations[0]?.id ?? '');
  return (
    <div className="toolbar">
      <select
        aria-label="Organization of the new project"
        value={orgId}
        onChange={(e) => setOrgId(e.target.value)}
      >
        {organizations.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </select>{' '}
      <NameForm
        label="New project"
        button="Create project"
        create={async (name) => onCreated((await projectsApi.createProject(orgId, name)).project)}
      />
    </div>
  );
}

/** A name edited in place and saved. */
function RenameForm({
  label,
  name,
  save,
}: {
  label: string;
  name: string;
  save: (name: string) => Promise<void>;
}) {
  const [value, setValue] = useState(name);
  const { error, busy, onSubmit } = useWrite(() => save(value));
  return (
    <form onSubmit={onSubmit} aria-label={label}>
      <input value={value} aria-label={label} onChange={(e) => setValue(e.target.value)} />{' '}
      <button type="submit" disabled={busy || value.trim() === '' || value === name}>
        Rename
      </button>
      <InlineError error={error} />
    </form>
  );
}

/** Deletion asks for the name, typed, before the button works. */
function ConfirmDelete({
  kind,
  name,
  warning,
  remove,
  onDeleted,
}: {
  kind: 'project' | 'organization';
  name: string;
  warning: string;
  remove: (typed: string) => Promise<unknown>;
  onDeleted: () => void;
}) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const { error, busy, onSubmit } = useWrite(async () => {
    await remove(typed);
    onDeleted();
  });
  if (!open)
    return (
      <button type="button" className="danger" onClick={() => setOpen(true)}>
        Delete…
      </button>
    );
  const Kind = kind === 'project' ? 'Project' : 'Organization';
  return (
    <form onSubmit={onSubmit} aria-label={`Delete ${kind} ${name}`}>
      <p>
        Deleting <strong>{name}</strong>: {warning} Type its name to confirm.
      </p>
      <input
        value={typed}
        aria-label={`${Kind} name to confirm`}
        onChange={(e) => setTyped(e.target.value)}
      />{' '}
      <button type="submit" className="danger" disabled={busy || typed !== name}>
        Delete {kind}
      </button>{' '}
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
      <InlineError error={error} />
    </form>
  );
}

const InlineError = ({ error }: { error: string | undefined }) =>
  error ? (
    <span className="error" role="alert">
      {' '}
      {error}
    </span>
  ) : null;
