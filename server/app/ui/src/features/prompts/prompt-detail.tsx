/**
 * A prompt's versions: each one's text and config, a line diff between any two, and the form that
 * moves a label.
 */
import { type FormEvent, useEffect, useState } from 'react';
import { ErrorAlert } from '../../shared/fields.tsx';
import { formatTime } from '../../shared/format.ts';
import { Grid, WordsCell } from '../../shared/lists.tsx';
import { type PromptVersion, promptsApi } from './api.ts';
import { lineDiff, promptText } from './prompt-view.ts';

export function PromptDetail({
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
