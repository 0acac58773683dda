import { useState } from 'react';
import { api, type SessionInfo } from '../api.ts';
import { Field } from '../fields.tsx';
import { useWrite } from '../hooks.ts';

/**
 * The signed-in user's password change. The server ends every session of the user and gives this
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
    await api.changePassword(current, next);
    // The old session ended with the change; the fresh one is already this browser's cookie.
    onSignedIn(await api.session());
    setCurrent('');
    setNext('');
    setConfirmation('');
    setDone(true);
  });

  return (
    <main className="centered">
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
    </main>
  );
}
