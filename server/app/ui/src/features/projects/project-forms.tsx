/**
 * The projects page's small forms: retention, a new name, a rename in place, a deletion confirmed
 * by name.
 */
import { type FormEvent, useState } from 'react';
import { useWrite } from '../../shared/hooks.ts';
import { type Organization, type Project, projectsApi } from './api.ts';

export const retentionText = (p: Project) => (p.retentionDays ? `${p.retentionDays} days` : 'forever');

/** Owners set the days a project keeps its data; empty or 0 keeps it forever. */
export function RetentionForm({ project, onSaved }: { project: Project; onSaved: (p: Project) => void }) {
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
export function NameForm({
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
export function NewProjectForm({
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
export function RenameForm({
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
export function ConfirmDelete({
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
