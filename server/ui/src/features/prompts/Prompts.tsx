/**
 * A project's prompts: names in folders (the `/` of a name) with their type, labels and tags; a
 * prompt's versions with their labels, config as JSON and a line diff between any two; a form that
 * moves a label onto a version (the protected `production` label is refused by the server for
 * non-owners, and said so here); and the playground, which sends a text or chat prompt with its
 * variables to a model of the project's LLM connections, shows the completion with its tokens and
 * cost, and saves the prompt tried as a new version.
 */
import { type FormEvent, useCallback, useEffect, useMemo, useState } from 'react';
import { ErrorAlert } from '../../shared/fields.tsx';
import { formatTime } from '../../shared/format.ts';
import { useLoaded } from '../../shared/hooks.ts';
import { Grid, WordsCell } from '../../shared/lists.tsx';
import { type LlmConnection, llmConnectionsApi } from '../llm-connections/api.ts';
import { type PlaygroundRun, type PromptVersion, promptsApi } from './api.ts';
import { folderEntries, lineDiff, promptText, variablesOf } from './prompt-view.ts';

export function Prompts({ projectId }: { projectId: string }) {
  const {
    data: prompts,
    error,
    reload: load,
  } = useLoaded(useCallback(() => promptsApi.prompts(projectId).then((p) => p.data), [projectId]));
  const [folder, setFolder] = useState('');
  const [selected, setSelected] = useState<string | undefined>();
  const [draft, setDraft] = useState<PromptVersion | undefined>();
  const [generation, setGeneration] = useState(0);

  const changed = () => {
    setGeneration((g) => g + 1);
    void load();
  };

  if (error) return <main className="error">{error}</main>;
  if (!prompts) return <main className="muted">Loading…</main>;
  const byName = new Map(prompts.map((p) => [p.name, p]));
  const entries = folderEntries(
    prompts.map((p) => p.name),
    folder,
  );
  const crumbs = folder === '' ? [] : folder.split('/');
  return (
    <main>
      <h1>Prompts</h1>
      <nav aria-label="Folder" className="crumbs">
        <button type="button" className="link" onClick={() => setFolder('')}>
          All prompts
        </button>
        {crumbs.map((c, i) => (
          <span key={crumbs.slice(0, i + 1).join('/')}>
            {' / '}
            <button
              type="button"
              className="link"
              onClick={() => setFolder(crumbs.slice(0, i + 1).join('/'))}
            >
              {c}
            </button>
          </span>
        ))}
      </nav>
      <Grid
        empty={
          entries.length === 0 && 'No prompt yet: create one with the SDK, the API or the playground below.'
        }
        label="Prompts"
        columns={['Name', 'Type', 'Versions', 'Labels', 'Tags', 'Updated']}
      >
        {entries.map((e) => {
          if (e.kind === 'folder')
            return (
              <tr key={`folder:${e.path}`}>
                <td colSpan={6}>
                  <button type="button" className="link" onClick={() => setFolder(e.path)}>
                    📁 {e.label}/
                  </button>
                </td>
              </tr>
            );
          const p = byName.get(e.path)!;
          return (
            <tr key={e.path} aria-selected={selected === e.path}>
              <td>
                <button type="button" className="link" onClick={() => setSelected(e.path)}>
                  {e.label}
                </button>
              </td>
              <td>{p.type}</td>
              <td className="num">{p.versions.length}</td>
              <WordsCell words={p.labels} className="chip" />
              <WordsCell words={p.tags} className="chip tag" prefix="#" />
              <td>{formatTime(p.lastUpdatedAt)}</td>
            </tr>
          );
        })}
      </Grid>
      {selected && (
        <PromptDetail
          key={`${selected}:${generation}`}
          projectId={projectId}
          name={selected}
          onChange={changed}
          onTry={setDraft}
        />
      )}
      <Playground
        key={draft ? `${draft.name}:${draft.version}` : 'new'}
        projectId={projectId}
        from={draft}
        onSaved={(v) => {
          changed();
          setSelected(v.name);
        }}
      />
    </main>
  );
}

function PromptDetail({
  projectId,
  name,
  onChange,
  onTry,
}: {
  projectId: string;
  name: string;
  onChange: () => void;
  onTry: (v: PromptVersion) => void;
}) {
  const [versions, setVersions] = useState<PromptVersion[] | undefined>();
  const [shown, setShown] = useState<number | undefined>();
  const [compare, setCompare] = useState<{ from: number; to: number } | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    promptsApi.promptVersions(projectId, name).then(
      (r) => {
        setVersions(r.data);
        setShown(r.data[0]?.version);
        if (r.data.length > 1) setCompare({ from: r.data[1]!.version, to: r.data[0]!.version });
      },
      (e: Error) => setError(e.message),
    );
  }, [projectId, name]);

  if (error) return <p className="error">{error}</p>;
  if (!versions) return <p className="muted">Loading…</p>;
  const current = versions.find((v) => v.version === shown) ?? versions[0]!;
  const of = (n: number) => versions.find((v) => v.version === n);
  return (
    <section aria-label={`Prompt ${name}`}>
      <h2>{name}</h2>
      <Grid label="Versions" className="compact" columns={['Version', 'Labels', 'Commit message', 'Created']}>
        {versions.map((v) => (
          <tr key={v.version} aria-selected={v.version === current.version}>
            <td>
              <button type="button" className="link" onClick={() => setShown(v.version)}>
                v{v.version}
              </button>
            </td>
            <WordsCell words={[...v.labels].sort()} className="chip" />
            <td>{v.commitMessage ?? ''}</td>
            <td>{formatTime(v.createdAt)}</td>
          </tr>
        ))}
      </Grid>
      <h3>
        Version {current.version} ({current.type})
      </h3>
      <pre className="prompt-text">{promptText(current.prompt)}</pre>
      <h3>Config</h3>
      <pre className="config">{JSON.stringify(current.config ?? {}, null, 2)}</pre>
      <button type="button" onClick={() => onTry(current)}>
        Open in playground
      </button>
      <MoveLabel projectId={projectId} name={name} versions={versions} onMoved={onChange} />
      {compare && (
        <>
          <h3>Diff</h3>
          <div className="row">
            <VersionSelect
              label="From"
              versions={versions}
              value={compare.from}
              onChange={(from) => setCompare({ ...compare, from })}
            />{' '}
            <VersionSelect
              label="To"
              versions={versions}
              value={compare.to}
              onChange={(to) => setCompare({ ...compare, to })}
            />
          </div>
          <pre className="diff">
            {lineDiff(promptText(of(compare.from)?.prompt), promptText(of(compare.to)?.prompt)).map(
              (l, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a diff line is its position
                <div key={`${i}:${l.op}`} className={`diff-${l.op}`}>
                  {l.op === 'added' ? '+ ' : l.op === 'removed' ? '- ' : '  '}
                  {l.text}
                </div>
              ),
            )}
          </pre>
        </>
      )}
    </section>
  );
}

function VersionSelect({
  label,
  versions,
  value,
  onChange,
}: {
  label: string;
  versions: PromptVersion[];
  value: number;
  onChange: (version: number) => void;
}) {
  return (
    <label>
      {label}{' '}
      <select value={value} onChange={(e) => onChange(Number(e.target.value))}>
        {versions.map((v) => (
          <option key={v.version} value={v.version}>
            v{v.version}
          </option>
        ))}
      </select>
    </label>
  );
}

function MoveLabel({
  projectId,
  name,
  versions,
  onMoved,
}: {
  projectId: string;
  name: string;
  versions: PromptVersion[];
  onMoved: () => void;
}) {
  const [version, setVersion] = useState(versions[0]!.version);
  const [label, setLabel] = useState('production');
  const [error, setError] = useState<string | undefined>();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    promptsApi
      .movePromptLabels(projectId, { name, version, newLabels: [label.trim()] })
      .then(onMoved, (err: Error) => setError(err.message));
  };
  return (
    <form aria-label="Move label" onSubmit={submit}>
      <h3>Move a label</h3>
      <label>
        Label <input value={label} onChange={(e) => setLabel(e.target.value)} required />
      </label>{' '}
      <VersionSelect label="Onto version" versions={versions} value={version} onChange={setVersion} />{' '}
      <button type="submit">Move label</button>
      <ErrorAlert error={error} />
    </form>
  );
}

const formatCost = (c: number) => `$${c.toFixed(6)}`;

function Playground({
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
