/** The account page: the user's sessions and the password change. */
import { useCallback, useEffect, useState } from 'react';
import { Field } from '../../shared/fields.tsx';
import { formatTime } from '../../shared/format.ts';
import { useWrite } from '../../shared/hooks.ts';
import { type SessionInfo, type UserSession, usersApi } from './api.ts';

/**
 * The signed-in user's sessions (each revocable, or all but this one) and password change. The server ends every session of the user and gives this
 * one a fresh session (new cookie and CSRF token), which the shell adopts: the user stays signed in
 * here and is signed out everywhere else.
 */
export function Account({ email, onSignedIn }: { email: string; onSignedIn: (s: SessionInfo) => void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [done, setDone] = useState(false);
  const { error, busy, onSubmit } = useWrite(async () => {
    setDone(false);
    if (next !== confirmation) throw new Error('The new password and its confirmation differ');
    await usersApi.changePassword(current, next);
    // The old session ended with the change; the fresh one is already this browser's cookie.
    onSignedIn(await usersApi.session());
    setCurrent('');
    setNext('');
    setConfirmation('');
    setDone(true);
  });

  return (
    <main className="centered" style={{ flexDirection: 'column', gap: '1rem' }}>
      <form className="card login" onSubmit={onSubmit} aria-label="Change password">
        <h1>Change password</h1>
        <p className="muted">{email}</p>
        <input type="email" autoComplete="username" value={email} readOnly hidden />
        <Field
          label="Current password"
          type="password"
          autoComplete="current-password"
          value={current}
          onValue={setCurrent}
        />
        <Field
          label="New password"
          type="password"
          autoComplete="new-password"
          value={next}
          onValue={setNext}
        />
        <Field
          label="Confirm new password"
          type="password"
          autoComplete="new-password"
          value={confirmation}
          onValue={setConfirmation}
        />
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        {done && <p role="status">Password changed. Every other session of this account was signed out.</p>}
        <button type="submit" disabled={busy}>
          {busy ? 'Changing…' : 'Change password'}
        </button>
      </form>
      <Sessions />
    </main>
  );
}

/** Where the user is signed in; another browser's session ends when revoked here. */
function Sessions() {
  const [sessions, setSessions] = useState<UserSession[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const load = useCallback(
    () =>
      usersApi.sessions().then(
        (r) => setSessions(r.data),
        (e: Error) => setError(e.message),
      ),
    [],
  );
  useEffect(() => {
    load();
  }, [load]);
  const act = (run: () => Promise<unknown>) => {
    setError(undefined);
    run().then(load, (e: Error) => setError(e.message));
  };
  return (
    <section className="card" aria-label="Sessions">
      <h2>Sessions</h2>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {!sessions ? (
        <p className="muted">Loading sessions…</p>
      ) : (
        <table className="grid">
          <thead>
            <tr>
              <th>Signed in</th>
              <th>Last seen</th>
              <th>Browser</th>
              <th>Address</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr key={s.id}>
                <td>{formatTime(s.createdAt)}</td>
                <td>{formatTime(s.lastSeenAt)}</td>
                <td>{s.userAgent ?? '—'}</td>
                <td>{s.ip ?? '—'}</td>
                <td>
                  {s.current ? (
                    <strong>This session</strong>
                  ) : (
                    <button
                      type="button"
                      className="danger"
                      onClick={() => act(() => usersApi.revokeSession(s.id))}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {sessions && sessions.length > 1 && (
        <button type="button" className="danger" onClick={() => act(usersApi.revokeOtherSessions)}>
          Sign out all other sessions
        </button>
      )}
    </section>
  );
}
