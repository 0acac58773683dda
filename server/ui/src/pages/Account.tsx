import { type FormEvent, useState } from 'react';
import { api, type SessionInfo } from '../api.ts';

/**
 * The signed-in user's password change. The server ends every session of the user and gives this
 * one a fresh session (new cookie and CSRF token), which the shell adopts: the user stays signed in
 * here and is signed out everywhere else.
 */
export function Account({ email, onSignedIn }: { email: string; onSignedIn: (s: SessionInfo) => void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    setDone(false);
    if (next !== confirmation) {
      setError('The new password and its confirmation differ');
      return;
    }
    setBusy(true);
    try {
      await api.changePassword(current, next);
      // The old session ended with the change; the fresh one is already this browser's cookie.
      onSignedIn(await api.session());
      setCurrent('');
      setNext('');
      setConfirmation('');
      setDone(true);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="centered">
      <form className="card login" onSubmit={submit} aria-label="Change password">
        <h1>Change password</h1>
        <p className="muted">{email}</p>
        <input type="email" autoComplete="username" value={email} readOnly hidden />
        <label>
          Current password
          <input
            type="password"
            autoComplete="current-password"
            value={current}
            onChange={(e) => setCurrent(e.target.value)}
            required
          />
        </label>
        <label>
          New password
          <input
            type="password"
            autoComplete="new-password"
            value={next}
            onChange={(e) => setNext(e.target.value)}
            required
          />
        </label>
        <label>
          Confirm new password
          <input
            type="password"
            autoComplete="new-password"
            value={confirmation}
            onChange={(e) => setConfirmation(e.target.value)}
            required
          />
        </label>
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
    </main>
  );
}
