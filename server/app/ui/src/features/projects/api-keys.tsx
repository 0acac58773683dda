/** The project's API keys, for owners: listed masked, created (the secret shown once) and revoked. */
import { type FormEvent, useState } from 'react';
import { ErrorAlert } from '../../shared/fields.tsx';
import { formatTime } from '../../shared/format.ts';
import { useLoaded } from '../../shared/hooks.ts';
import { Grid } from '../../shared/lists.tsx';
import { type ApiKey, projectsApi } from './api.ts';

export function ApiKeys({ projectId }: { projectId: string }) {
  const {
    data: keys = [],
    error,
    act,
  } = useLoaded(() => projectsApi.apiKeys(projectId).then((r) => r.data), [projectId]);
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
