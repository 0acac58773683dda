/** The sign-in page: email and password; the session it starts goes to the shell. */
import { useState } from 'react';
import { setCsrfToken } from '../../shared/api.ts';
import { Field } from '../../shared/fields.tsx';
import { useWrite } from '../../shared/hooks.ts';
import { type SessionInfo, usersApi } from './api.ts';

export function Login({ onSignedIn }: { onSignedIn: (s: SessionInfo) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { error, busy, onSubmit } = useWrite(async () => {
    const s = await usersApi.login(email, password);
    setCsrfToken(s.csrfToken);
    onSignedIn(s);
  });

  return (
    <main className="centered">
      <form className="card login" onSubmit={onSubmit}>
        <h1>Sign in to Observatory</h1>
        <Field label="Email" type="email" autoComplete="username" value={email} onValue={setEmail} />
        <Field
          label="Password"
          type="password"
          autoComplete="current-password"
          value={password}
          onValue={setPassword}
        />
        {error && <p className="error">{error}</p>}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
