/**
 * The playground: runs a text or chat prompt with its variables on an LLM connection, saves it as a
 * new version.
 */
import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { ErrorAlert } from '../../shared/fields.tsx';
import { type LlmConnection, llmConnectionsApi } from '../llm-connections/api.ts';
import { type PlaygroundRun, type PromptVersion, promptsApi } from './api.ts';
import { variablesOf } from './prompt-view.ts';

const formatCost = (c: number) => `$${c.toFixed(6)}`;

export function Playground({
  projectId,
  from,
  onSaved,
}: {
  projectId: string;
  from: PromptVersion | undefined;
  onSaved: (v: PromptVersion) => void;
}) {
  const [connections, setConnections] = useState<LlmConnection[]>([]);
  const [provider, setProvider] = useState('');
  const [model, setModel] = useState('');
  const [type, setType] = useState<'text' | 'chat'>(from?.type ?? 'text');
  const [text, setText] = useState(
    from ? (from.type === 'chat' ? JSON.stringify(from.prompt, null, 2) : String(from.prompt)) : '',
  );
  const [values, setValues] = useState<Record<string, string>>({});
  const [run, setRun] = useState<PlaygroundRun | undefined>();
  const [running, setRunning] = useState(false);
  const [name, setName] = useState(from?.name ?? '');
  const [commitMessage, setCommitMessage] = useState('');
  const [saved, setSaved] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    llmConnectionsApi.llmConnections(projectId).then(
      (r) => {
        setConnections(r.data);
        const first = r.data[0];
        if (first) {
          setProvider(first.provider);
          setModel(first.customModels[0] ?? '');
        }
      },
      (e: Error) => setError(e.message),
    );
  }, [projectId]);

  // A chat prompt is edited as its JSON list of messages; a parse error is shown, not sent.
  const parsed = useMemo((): { prompt: unknown } | { problem: string } => {
    if (type === 'text') return { prompt: text };
    try {
      const v = JSON.parse(text) as unknown;
      return Array.isArray(v) ? { prompt: v } : { problem: 'a chat prompt is a JSON list of messages' };
    } catch (e) {
      return { problem: `messages are not JSON: ${(e as Error).message}` };
    }
  }, [type, text]);
  const variables = 'prompt' in parsed ? variablesOf(parsed.prompt) : [];

  const send = (e: FormEvent) => {
    e.preventDefault();
    if (!('prompt' in parsed)) return;
    setError(undefined);
    setRun(undefined);
    setRunning(true);
    const used = Object.fromEntries(variables.map((v) => [v, values[v] ?? '']));
    promptsApi
      .runPlayground(projectId, {
        provider,
        model,
        type,
        prompt: parsed.prompt,
        variables: used,
        ...(name ? { name } : {}),
      })
      .then(setRun, (err: Error) => setError(err.message))
      .finally(() => setRunning(false));
  };

  const save = () => {
    if (!('prompt' in parsed)) return;
    setError(undefined);
    promptsApi
      .createPrompt(projectId, {
        name,
        type,
        prompt: parsed.prompt,
        config: { ...((from?.config as Record<string, unknown> | undefined) ?? {}), model, provider },
        ...(commitMessage ? { commitMessage } : {}),
      })
      .then(
        (v) => {
          setSaved(`Saved ${v.name} version ${v.version}`);
          onSaved(v);
        },
        (err: Error) => setError(err.message),
      );
  };

  const models = connections.find((c) => c.provider === provider)?.customModels ?? [];
  return (
    <section aria-label="Playground">
      <h2>Playground</h2>
      {connections.length === 0 && (
        <p className="muted">No LLM connection in this project: add one with the LLM connections API.</p>
      )}
      <form aria-label="Playground" onSubmit={send}>
        <div className="row">
          <label>
            Connection{' '}
            <select value={provider} onChange={(e) => setProvider(e.target.value)}>
              {connections.map((c) => (
                <option key={c.id} value={c.provider}>
                  {c.provider} ({c.adapter})
                </option>
              ))}
            </select>
          </label>{' '}
          <label>
            Model{' '}
            <input
              value={model}
              onChange={(e) => setModel(e.target.value)}
              list="playground-models"
              required
            />
          </label>
          <datalist id="playground-models">
            {models.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>{' '}
          <label>
            Type{' '}
            <select value={type} onChange={(e) => setType(e.target.value as 'text' | 'chat')}>
              <option value="text">text</option>
              <option value="chat">chat</option>
            </select>
          </label>
        </div>
        <label className="block">
          {type === 'text' ? 'Prompt' : 'Messages (JSON)'}
          <textarea value={text} onChange={(e) => setText(e.target.value)} rows={6} required />
        </label>
        {'problem' in parsed && <p className="error">{parsed.problem}</p>}
        {variables.map((v) => (
          <label key={v} className="block">
            Variable {v}
            <input value={values[v] ?? ''} onChange={(e) => setValues({ ...values, [v]: e.target.value })} />
          </label>
        ))}
        <button type="submit" disabled={running || !provider || 'problem' in parsed}>
          {running ? 'Running…' : 'Run'}
        </button>
      </form>
      <ErrorAlert error={error} />
      {run && (
        <section aria-label="Completion">
          <h3>Completion</h3>
          <pre className="completion">{run.completion}</pre>
          <p className="run-usage">
            Tokens: input {run.usage['input'] ?? '?'} · output {run.usage['output'] ?? '?'} · total{' '}
            {run.usage['total'] ?? '?'}
          </p>
          <p className="run-cost">
            Cost:{' '}
            {run.cost?.['total'] !== undefined ? formatCost(run.cost['total']) : 'no price for this model'}
          </p>
          <p className="muted">{run.latencyMs} ms</p>
        </section>
      )}
      <form
        aria-label="Save prompt"
        onSubmit={(e) => {
          e.preventDefault();
          save();
        }}
      >
        <h3>Save as a new version</h3>
        <label>
          Prompt name <input value={name} onChange={(e) => setName(e.target.value)} required />
        </label>{' '}
        <label>
          Commit message <input value={commitMessage} onChange={(e) => setCommitMessage(e.target.value)} />
        </label>{' '}
        <button type="submit" disabled={'problem' in parsed}>
          Save as new version
        </button>
        {saved && <p role="status">{saved}</p>}
      </form>
    </section>
  );
}
