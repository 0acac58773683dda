import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { type ApiKey, api, type Invitation, type Member, type Project } from '../api.ts';
import { formatTime } from '../format.ts';

const ROLES: Project['role'][] = ['owner', 'member', 'viewer'];

/** A project's settings: its people for everyone in it, its API keys and invitations for owners. */
export function Settings({ projectId }: { projectId: string }) {
  const [role, setRole] = useState<Project['role'] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    api.project(projectId).then(
      (p) => setRole(p.project.role),
      (e: Error) => setError(e.message),
    );
  }, [projectId]);
  if (error) return <main className="error">{error}</main>;
  if (!role) return <main className="muted">Loading…</main>;
  return (
    <main>
      <h1>Settings</h1>
      <Members projectId={projectId} owner={role === 'owner'} />
      {role === 'owner' && <ApiKeys projectId={projectId} />}
    </main>
  );
}

function Members({ projectId, owner }: { projectId: string; owner: boolean }) {
  const [members, setMembers] = useState<Member[]>([]);
  const [invitations, setInvitations] = useState<Invitation[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [email, setEmail] = useState('');
  const [inviteRole, setInviteRole] = useState<Project['role']>('member');
  const [link, setLink] = useState<string | undefined>();
  const load = useCallback(
    () =>
      api.members(projectId).then(
        (r) => {
          setMembers(r.members);
          setInvitations(r.invitations);
        },
        (e: Error) => setError(e.message),
      ),
    [projectId],
  );
  useEffect(() => {
    void load();
  }, [load]);
  const act = (p: Promise<unknown>) => {
    setError(undefined);
    p.then(load, (e: Error) => setError(e.message));
  };
  const invite = (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    api.invite(projectId, email, inviteRole).then(
      (r) => {
        setLink(r.link);
        setEmail('');
        void load();
      },
      (err: Error) => setError(err.message),
    );
  };
  return (
    <section>
      <h2>Members</h2>
      <table className="grid" aria-label="Members">
        <thead>
          <tr>
            <th>Email</th>
            <th>Name</th>
            <th>Role</th>
            {owner && <th />}
          </tr>
        </thead>
        <tbody>
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
                      act(api.setMemberRole(projectId, m.userId, e.target.value as Project['role']))
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
                    <button type="button" onClick={() => act(api.removeMember(projectId, m.userId))}>
                      Remove {m.email}
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {invitations.length > 0 && (
        <table className="grid" aria-label="Pending invitations">
          <thead>
            <tr>
              <th>Invited</th>
              <th>Role</th>
              <th>Expires</th>
              {owner && <th />}
            </tr>
          </thead>
          <tbody>
            {invitations.map((i) => (
              <tr key={i.id}>
                <td>{i.email}</td>
                <td>{i.role}</td>
                <td>{formatTime(i.expiresAt)}</td>
                {owner && (
                  <td>
                    <button type="button" onClick={() => act(api.withdrawInvitation(projectId, i.id))}>
                      Withdraw
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
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
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

function ApiKeys({ projectId }: { projectId: string }) {
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [note, setNote] = useState('');
  const [created, setCreated] = useState<{ publicKey: string; secretKey: string } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const load = useCallback(
    () =>
      api.apiKeys(projectId).then(
        (r) => setKeys(r.data),
        (e: Error) => setError(e.message),
      ),
    [projectId],
  );
  useEffect(() => {
    void load();
  }, [load]);
  const create = (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    api.createApiKey(projectId, note).then(
      (k) => {
        setCreated({ publicKey: k.publicKey, secretKey: k.secretKey });
        setNote('');
        void load();
      },
      (err: Error) => setError(err.message),
    );
  };
  const revoke = (k: ApiKey) => {
    if (!window.confirm(`Revoke ${k.publicKey}? Clients using it are refused within 30 seconds.`)) return;
    api.revokeApiKey(projectId, k.id).then(load, (err: Error) => setError(err.message));
  };
  return (
    <section>
      <h2>API keys</h2>
      <table className="grid" aria-label="API keys">
        <thead>
          <tr>
            <th>Public key</th>
            <th>Secret key</th>
            <th>Note</th>
            <th>Created</th>
            <th>Last used</th>
            <th />
          </tr>
        </thead>
        <tbody>
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
        </tbody>
      </table>
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
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
