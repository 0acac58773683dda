/** The settings page's LLM connections section and its form. */
import { useState } from 'react';
import { Check, Choice, ErrorAlert, Input, useForm } from '../../shared/fields.tsx';
import { formatTime } from '../../shared/format.ts';
import { useLoaded, useWrite } from '../../shared/hooks.ts';
import { Grid } from '../../shared/lists.tsx';
import { type LlmConnection, llmConnectionsApi } from './api.ts';

const ADAPTERS = ['openai', 'anthropic'] as const;

/**
 * The project's LLM connections, which evaluators and the playground call. The list shows the secret
 * masked and only the names of extra headers (the server never returns a secret or a header value);
 * the form creates a connection or replaces the one of the same provider, so the secret and header
 * values are typed again on every update. A refused base URL is shown as the API's error, naming it.
 */
export function LlmConnections({ projectId }: { projectId: string }) {
  const {
    data: connections,
    error,
    reload,
    act,
  } = useLoaded(() => llmConnectionsApi.llmConnections(projectId).then((r) => r.data), [projectId]);
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
  const { form, setForm, bind, check } = useForm({
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
      <Check label="Offer the adapter's default models" {...check('withDefaultModels')} />
      <button type="submit">{editing ? 'Update connection' : 'Create connection'}</button>
      {saved && <p role="status">{saved}</p>}
      <ErrorAlert error={error} />
    </form>
  );
}
