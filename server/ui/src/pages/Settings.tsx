/**
 * A project's settings: its LLM connections, which evaluators call. The list shows the secret
 * masked and only the names of extra headers (the server never returns a secret or a header
 * value); the form creates a connection or replaces the one of the same provider, so the secret
 * and header values are typed again on every update. A refused base URL (private, loopback,
 * metadata addresses) is shown as the API's error, which names the field.
 */
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, type LlmConnection } from '../api.ts';
import { formatTime } from '../format.ts';

const ADAPTERS = ['openai', 'anthropic'] as const;

export function Settings({ projectId }: { projectId: string }) {
  const [connections, setConnections] = useState<LlmConnection[] | undefined>();
  const [editing, setEditing] = useState<LlmConnection | undefined>();
  const [error, setError] = useState<string | undefined>();
  const load = useCallback(
    () =>
      api.llmConnections(projectId).then(
        (r) => setConnections(r.data),
        (e: Error) => setError(e.message),
      ),
    [projectId],
  );
  useEffect(() => {
    void load();
  }, [load]);
  const remove = (c: LlmConnection) =>
    api.deleteLlmConnection(projectId, c.id).then(load, (e: Error) => setError(e.message));

  if (!connections) return <main className={error ? 'error' : 'muted'}>{error ?? 'Loading…'}</main>;
  return (
    <main>
      <h1>Project settings</h1>
      <h2>LLM connections</h2>
      {error && <p className="error">{error}</p>}
      {connections.length === 0 ? (
        <p className="muted">No LLM connection yet: evaluators need one to call their model.</p>
      ) : (
        <table className="grid" aria-label="LLM connections">
          <thead>
            <tr>
              <th>Provider</th>
              <th>Adapter</th>
              <th>Base URL</th>
              <th>Secret key</th>
              <th>Extra headers</th>
              <th>Models</th>
              <th>Updated</th>
              <th />
            </tr>
          </thead>
          <tbody>
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
                  {[...c.customModels, ...(c.withDefaultModels ? ['(default models)'] : [])].join(', ') ||
                    '–'}
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
          </tbody>
        </table>
      )}
      <ConnectionForm key={editing?.id ?? 'new'} projectId={projectId} editing={editing} onSaved={load} />
    </main>
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
  const [form, setForm] = useState({
    provider: editing?.provider ?? '',
    adapter: editing?.adapter ?? 'openai',
    baseURL: editing?.baseURL ?? '',
    secretKey: '',
    headers: (editing?.extraHeaderKeys ?? []).map((k) => `${k}: `).join('\n'),
    customModels: (editing?.customModels ?? []).join(', '),
    withDefaultModels: editing?.withDefaultModels ?? true,
  });
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [k]: e.target.value }));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    setSaved(undefined);
    try {
      const c = await api.saveLlmConnection(projectId, {
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
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form
      className="card"
      aria-label={editing ? `Edit LLM connection ${editing.provider}` : 'New LLM connection'}
      onSubmit={(e) => void submit(e)}
    >
      <h3>{editing ? `Update ${editing.provider}` : 'New connection'}</h3>
      <label>
        Provider name <input value={form.provider} onChange={set('provider')} readOnly={Boolean(editing)} />
      </label>
      <label>
        Adapter{' '}
        <select value={form.adapter} onChange={set('adapter')}>
          {ADAPTERS.map((a) => (
            <option key={a}>{a}</option>
          ))}
        </select>
      </label>
      <label>
        Base URL <input value={form.baseURL} onChange={set('baseURL')} placeholder="the adapter's default" />
      </label>
      <label>
        Secret key{' '}
        <input
          type="password"
          autoComplete="off"
          value={form.secretKey}
          onChange={set('secretKey')}
          placeholder={editing ? 'type it again to update' : ''}
        />
      </label>
      <label>
        Extra headers{' '}
        <textarea
          value={form.headers}
          onChange={set('headers')}
          placeholder="Name: value, one per line (values are never shown again)"
        />
      </label>
      <label>
        Custom models{' '}
        <input value={form.customModels} onChange={set('customModels')} placeholder="comma-separated" />
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
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
