/** The project's members and pending invitations; owners change roles, remove members, invite. */
import { type FormEvent, useState } from 'react';
import { ErrorAlert } from '../../shared/fields.tsx';
import { formatTime } from '../../shared/format.ts';
import { useLoaded } from '../../shared/hooks.ts';
import { Grid } from '../../shared/lists.tsx';
import { type Project, projectsApi } from './api.ts';

const ROLES: Project['role'][] = ['owner', 'member', 'viewer'];

export function Members({ projectId, owner }: { projectId: string; owner: boolean }) {
  const { data, error, act } = useLoaded(() => projectsApi.members(projectId), [projectId]);
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
