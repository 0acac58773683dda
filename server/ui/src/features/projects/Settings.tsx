import { type FormEvent, useCallback, useState } from 'react';
import { Choice, ErrorAlert, Input, useForm } from '../../shared/fields.tsx';
import { formatTime } from '../../shared/format.ts';
import { useLoaded, useWrite } from '../../shared/hooks.ts';
import { Grid } from '../../shared/lists.tsx';
import { type LlmConnection, llmConnectionsApi } from '../llm-connections/api.ts';
import { type ApiKey, type MaskingPreview, type Project, projectsApi } from './api.ts';

const ROLES: Project['role'][] = ['owner', 'member', 'viewer'];

/**
 * A project's settings: its people for everyone in it; invitations, API keys and LLM connections for
 * owners.
 */
export function Settings({ projectId }: { projectId: string }) {
  const { data: role, error } = useLoaded(
    useCallback(() => projectsApi.project(projectId).then((p) => p.project.role), [projectId]),
  );
  if (error) return <main className="error">{error}</main>;
  if (!role) return <main className="muted">Loading…</main>;
  return (
    <main>
      <h1>Settings</h1>
      <Members projectId={projectId} owner={role === 'owner'} />
      {role === 'owner' && <ApiKeys projectId={projectId} />}
      {role === 'owner' && <LlmConnections projectId={projectId} />}
      {role === 'owner' && <Masking projectId={projectId} />}
    </main>
  );
}

function Members({ projectId, owner }: { projectId: string; owner: boolean }) {
  const { data, error, act } = useLoaded(useCallback(() => projectsApi.members(projectId), [projectId]));
  const members = data?.members ?? [];
  const invitations = data?.invitations ?? [];
  const [email, setEmail] = useState('');
  const [inviteRole, setInviteRole] = useState<Project['role']>('member');
  const [link, setLink] = useState<string | undefined>();
  const invite = (e: FormEvent) => {
    e.preventDefault();
    void act(
      projectsApi.invite(projectId, email, inviteRole).then((r) => {
        setLink(r.link);
        setEmail('');
      }),
    );
  };
  return (
    <section>
      <h2>Members</h2>
      <Grid label="Members" columns={['Email', 'Name', 'Role', owner && '']}>
        {members.map((m) => (
          <tr key={m.userId}>
            <td>{m.email}</td>
            <td>{m.name ?? ''}</td>
            <td>
              {owner ? (
                <select
                  aria-label={`Role of ${m.email}`}
                  value={m.role}
                  onChange={(e) =>
                    void act(
                      projectsApi.setMemberRole(projectId, m.userId, e.target.value as Project['role']),
                    )
                  }
                >
                  {ROLES.map((r) => (
                    <option key={r}>{r}</option>
                  ))}
                </select>
              ) : (
                m.role
              )}
              {m.via === 'organization' && <span className="muted"> (organization)</span>}
            </td>
            {owner && (
              <td>
                {m.via === 'project' && (
                  <button
                    type="button"
                    onClick={() => void act(projectsApi.removeMember(projectId, m.userId))}
                  >
                    Remove {m.email}
                  </button>
                )}
              </td>
            )}
          </tr>
        ))}
      </Grid>
      {invitations.length > 0 && (
        <Grid label="Pending invitations" columns={['Invited', 'Role', 'Expires', owner && '']}>
          {invitations.map((i) => (
            <tr key={i.id}>
              <td>{i.email}</td>
              <td>{i.role}</td>
              <td>{formatTime(i.expiresAt)}</td>
              {owner && (
                <td>
                  <button
                    type="button"
                    onClick={() => void act(projectsApi.withdrawInvitation(projectId, i.id))}
                  >
                    Withdraw
                  </button>
                </td>
              )}
            </tr>
          ))}
        </Grid>
      )}
      {owner && (
        <form className="card" aria-label="Invite" onSubmit={invite}>
          <label>
            Email <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
          </label>{' '}
          <label>
            Role{' '}
            <select value={inviteRole} onChange={(e) => setInviteRole(e.target.value as Project['role'])}>
              {ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </label>{' '}
          <button type="submit">Invite</button>
          {link && (
            <p>
              One-time link, shown this once: <code className="invitation-link">{link}</code>
            </p>
          )}
        </form>
      )}
      <ErrorAlert error={error} />
    </section>
  );
}

function ApiKeys({ projectId }: { projectId: string }) {
  const {
    data: keys = [],
    error,
    act,
  } = useLoaded(useCallback(() => projectsApi.apiKeys(projectId).then((r) => r.data), [projectId]));
  const [note, setNote] = useState('');
  const [created, setCreated] = useState<{ publicKey: string; secretKey: string } | undefined>();
  const create = (e: FormEvent) => {
    e.preventDefault();
    void act(
      projectsApi.createApiKey(projectId, note).then((k) => {
        setCreated({ publicKey: k.publicKey, secretKey: k.secretKey });
        setNote('');
      }),
    );
  };
  const revoke = (k: ApiKey) => {
    if (!window.confirm(`Revoke ${k.publicKey}? Clients using it are refused within 30 seconds.`)) return;
    void act(projectsApi.revokeApiKey(projectId, k.id));
  };
  return (
    <section>
      <h2>API keys</h2>
      <Grid label="API keys" columns={['Public key', 'Secret key', 'Note', 'Created', 'Last used', '']}>
        {keys.map((k) => (
          <tr key={k.id}>
            <td>
              <code>{k.publicKey}</code>
            </td>
            <td>
              <code>{k.displaySecretKey}</code>
            </td>
            <td>{k.note ?? ''}</td>
            <td>{formatTime(k.createdAt)}</td>
            <td>{k.lastUsedAt ? formatTime(k.lastUsedAt) : 'never'}</td>
            <td>
              <button type="button" onClick={() => revoke(k)}>
                Revoke
              </button>
            </td>
          </tr>
        ))}
      </Grid>
      <form className="card" aria-label="New API key" onSubmit={create}>
        <label>
          Note <input value={note} maxLength={200} onChange={(e) => setNote(e.target.value)} />
        </label>{' '}
        <button type="submit">Create API key</button>
        {created && (
          <p>
            Shown this once: public key <code>{created.publicKey}</code>, secret key{' '}
            <code className="new-secret-key">{created.secretKey}</code>
          </p>
        )}
      </form>
      <ErrorAlert error={error} />
    </section>
  );
}

const ADAPTERS = ['openai', 'anthropic'] as const;

/**
 * The project's LLM connections, which evaluators and the playground call. The list shows the secret
 * masked and only the names of extra headers (the server never returns a secret or a header value);
 * the form creates a connection or replaces the one of the same provider, so the secret and header
 * values are typed again on every update. A refused base URL is shown as the API's error, naming it.
 */
function LlmConnections({ projectId }: { projectId: string }) {
  const {
    data: connections,
    error,
    reload,
    act,
  } = useLoaded(
    useCallback(() => llmConnectionsApi.llmConnections(projectId).then((r) => r.data), [projectId]),
  );
  const [editing, setEditing] = useState<LlmConnection | undefined>();
  const remove = (c: LlmConnection) => act(llmConnectionsApi.deleteLlmConnection(projectId, c.id));

  if (!connections) return <section className={error ? 'error' : 'muted'}>{error ?? 'Loading…'}</section>;
  return (
    <section>
      <h2>LLM connections</h2>
      {error && <p className="error">{error}</p>}
      {connections.length === 0 ? (
        <p className="muted">No LLM connection yet: evaluators need one to call their model.</p>
      ) : (
        <Grid
          label="LLM connections"
          columns={[
            'Provider',
            'Adapter',
            'Base URL',
            'Secret key',
            'Extra headers',
            'Models',
            'Updated',
            '',
          ]}
        >
          {connections.map((c) => (
            <tr key={c.id}>
              <td>{c.provider}</td>
              <td>{c.adapter}</td>
              <td>
                <code>{c.baseURL ?? 'default'}</code>
              </td>
              <td>
                <code className="masked-secret">{c.displaySecretKey}</code>
              </td>
              <td>{c.extraHeaderKeys.join(', ') || '–'}</td>
              <td>
                {[...c.customModels, ...(c.withDefaultModels ? ['(default models)'] : [])].join(', ') || '–'}
              </td>
              <td>{formatTime(c.updatedAt)}</td>
              <td>
                <button type="button" onClick={() => setEditing(c)}>
                  Edit
                </button>{' '}
                <button type="button" onClick={() => void remove(c)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </Grid>
      )}
      <ConnectionForm key={editing?.id ?? 'new'} projectId={projectId} editing={editing} onSaved={reload} />
    </section>
  );
}

/** `Name: value` per line. */
function parseHeaders(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf(':');
    if (line.trim() === '') continue;
    if (at <= 0) throw new Error(`extra headers: "${line.trim()}" is not "Name: value"`);
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

function ConnectionForm({
  projectId,
  editing,
  onSaved,
}: {
  projectId: string;
  editing: LlmConnection | undefined;
  onSaved: () => void;
}) {
  const { form, setForm, bind } = useForm({
    provider: editing?.provider ?? '',
    adapter: editing?.adapter ?? 'openai',
    baseURL: editing?.baseURL ?? '',
    secretKey: '',
    headers: (editing?.extraHeaderKeys ?? []).map((k) => `${k}: `).join('\n'),
    customModels: (editing?.customModels ?? []).join(', '),
    withDefaultModels: editing?.withDefaultModels ?? true,
  });
  const [saved, setSaved] = useState<string | undefined>();
  const { error, onSubmit } = useWrite(async () => {
    setSaved(undefined);
    const c = await llmConnectionsApi.saveLlmConnection(projectId, {
      provider: form.provider,
      adapter: form.adapter as (typeof ADAPTERS)[number],
      secretKey: form.secretKey,
      baseURL: form.baseURL.trim() || null,
      extraHeaders: parseHeaders(form.headers),
      customModels: form.customModels
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean),
      withDefaultModels: form.withDefaultModels,
    });
    setSaved(`Saved connection ${c.provider}`);
    // Secrets are not kept on the page once stored.
    setForm((f) => ({ ...f, secretKey: '', headers: c.extraHeaderKeys.map((k) => `${k}: `).join('\n') }));
    onSaved();
  });
  return (
    <form
      className="card"
      aria-label={editing ? `Edit LLM connection ${editing.provider}` : 'New LLM connection'}
      onSubmit={onSubmit}
    >
      <h3>{editing ? `Update ${editing.provider}` : 'New connection'}</h3>
      <Input label="Provider name" {...bind('provider')} readOnly={Boolean(editing)} />
      <Choice label="Adapter" {...bind('adapter')} options={ADAPTERS} />
      <Input label="Base URL" {...bind('baseURL')} placeholder="the adapter's default" />
      <label>
        Secret key{' '}
        <input
          type="password"
          autoComplete="off"
          {...bind('secretKey')}
          placeholder={editing ? 'type it again to update' : ''}
        />
      </label>
      <label>
        Extra headers{' '}
        <textarea
          {...bind('headers')}
          placeholder="Name: value, one per line (values are never shown again)"
        />
      </label>
      <label>
        Custom models <input {...bind('customModels')} placeholder="comma-separated" />
      </label>
      <label>
        <input
          type="checkbox"
          checked={form.withDefaultModels}
          onChange={(e) => setForm((f) => ({ ...f, withDefaultModels: e.target.checked }))}
        />{' '}
        Offer the adapter's default models
      </label>
      <button type="submit">{editing ? 'Update connection' : 'Create connection'}</button>
      {saved && <p role="status">{saved}</p>}
      <ErrorAlert error={error} />
    </form>
  );
}

const DETECTORS = ['email', 'card_number', 'api_key', 'iban', 'phone_number', 'custom'] as const;

/**
 * Masking rules: what ingestion replaces in inputs, outputs and metadata before storing anything
 * (server/masking/), with a dry run over the project's most recent observations.
 */
function Masking({ projectId }: { projectId: string }) {
  const { data, error, act, reload } = useLoaded(
    useCallback(() => projectsApi.maskingRules(projectId), [projectId]),
  );
  const rules = data?.data ?? [];
  const [preview, setPreview] = useState<MaskingPreview | undefined>();
  const { form, setForm, bind } = useForm({
    name: '',
    detector: 'email' as (typeof DETECTORS)[number],
    pattern: '',
    replacement: '',
    datasetItems: false,
  });
  const { error: createError, onSubmit } = useWrite(async () => {
    await projectsApi.createMaskingRule(projectId, {
      name: form.name,
      detector: form.detector,
      ...(form.detector === 'custom' ? { pattern: form.pattern } : {}),
      ...(form.replacement ? { replacement: form.replacement } : {}),
      datasetItems: form.datasetItems,
    });
    setForm((f) => ({ ...f, name: '', pattern: '', replacement: '' }));
    await reload();
  });
  return (
    <section>
      <h2>Masking</h2>
      <p className="muted">
        Matches are replaced before anything is stored, on every ingestion path. Other replicas apply a change
        within 5 seconds.
      </p>
      <ErrorAlert error={error} />
      <Grid
        label="Masking rules"
        columns={['Name', 'Detects', 'Replacement', 'Dataset items', 'Enabled', '']}
      >
        {rules.map((r) => (
          <tr key={r.id}>
            <td>{r.name}</td>
            <td>{r.detector === 'custom' ? <code>{r.pattern}</code> : r.detector}</td>
            <td>{r.replacement ?? 'default'}</td>
            <td>{r.datasetItems ? 'yes' : 'no'}</td>
            <td>
              <input
                type="checkbox"
                aria-label={`Enable ${r.name}`}
                checked={r.enabled}
                onChange={(e) =>
                  void act(projectsApi.updateMaskingRule(projectId, r.id, { enabled: e.target.checked }))
                }
              />
            </td>
            <td>
              <button type="button" onClick={() => void act(projectsApi.deleteMaskingRule(projectId, r.id))}>
                Delete {r.name}
              </button>
            </td>
          </tr>
        ))}
      </Grid>
      <form className="card" aria-label="New masking rule" onSubmit={onSubmit}>
        <h3>New rule</h3>
        <Input label="Rule name" {...bind('name')} />
        <Choice label="Detector" {...bind('detector')} options={DETECTORS} />
        {form.detector === 'custom' && <Input label="RE2 pattern" {...bind('pattern')} />}
        <Input label="Replacement" {...bind('replacement')} placeholder="the detector's default" />
        <label>
          <input
            type="checkbox"
            checked={form.datasetItems}
            onChange={(e) => setForm((f) => ({ ...f, datasetItems: e.target.checked }))}
          />{' '}
          Also mask dataset items
        </label>
        <button type="submit">Create masking rule</button>
        <ErrorAlert error={createError} />
      </form>
      <button type="button" onClick={() => void projectsApi.previewMasking(projectId).then(setPreview)}>
        Preview on recent observations
      </button>
      {preview && (
        <div role="status" aria-label="Masking preview">
          <p>
            {preview.observations.length} of {preview.scanned} recent observations would change.
          </p>
          <ul>
            {preview.observations.map((o) => (
              <li key={o.id}>
                <code>{o.id}</code>: {JSON.stringify(o.masked)}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
