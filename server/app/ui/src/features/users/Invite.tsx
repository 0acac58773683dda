/** The page an invitation link opens. */
import { type FormEvent, useEffect, useState } from 'react';
import { ErrorAlert, Field } from '../../shared/fields.tsx';
import { navigate } from '../../shared/router.ts';
import { type InvitationView, type SessionInfo, usersApi } from './api.ts';

/**
 * An invitation link: a new account for the invited email (name and password, then signed in), or,
 * for an email with an account, joining while signed in as it.
 */
export function Invite({
  token,
  session,
  onSignedIn,
}: {
  token: string;
  session: SessionInfo;
  onSignedIn: (s: SessionInfo) => void;
}) {
  const [invitation, setInvitation] = useState<InvitationView | undefined>();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    usersApi.invitation(token).then(setInvitation, (e: Error) => setError(e.message));
  }, [token]);

  const enter = async (projectId: string) => {
    onSignedIn(await usersApi.session());
    navigate(`/project/${encodeURIComponent(projectId)}/observations`);
  };
  const accept = (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    usersApi.acceptInvitation(token, name, password).then(
      (r) => enter(r.projectId),
      (err: Error) => setError(err.message),
    );
  };
  const join = () => {
    setError(undefined);
    usersApi.joinInvitation(token).then(
      (r) => enter(r.projectId),
      (err: Error) => setError(err.message),
    );
  };

  if (!invitation)
    return (
      <main className="centered">
        {error ? <p className="error">{error}</p> : <p className="muted">Loading…</p>}
      </main>
    );
  return (
    <main className="centered">
      <div className="card login">
        <h1>Join {invitation.projectName}</h1>
        <p>
          {invitation.email} is invited as {invitation.role}.
        </p>
        {invitation.existingUser ? (
          session.user?.email === invitation.email ? (
            <button type="button" onClick={join}>
              Join {invitation.projectName}
            </button>
          ) : (
            <p className="muted">
              Sign in as {invitation.email}, then open this link again. <a href="/login">Sign in</a>
            </p>
          )
        ) : (
          <form onSubmit={accept} aria-label="Create account">
            <input type="email" autoComplete="username" value={invitation.email} readOnly hidden />
            <Field label="Name" value={name} onValue={setName} />
            <Field
              label="Password"
              type="password"
              autoComplete="new-password"
              value={password}
              onValue={setPassword}
            />
            <button type="submit">Create account and join</button>
          </form>
        )}
        <ErrorAlert error={error} />
      </div>
    </main>
  );
}
