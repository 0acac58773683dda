/**
 * A project's prompts: names in folders (the `/` of a name) with their type, labels and tags; a
 * prompt's versions with their labels, config as JSON and a line diff between any two; a form that
 * moves a label onto a version (the protected `production` label is refused by the server for
 * non-owners, and said so here); and the playground, which sends a text or chat prompt with its
 * variables to a model of the project's LLM connections, shows the completion with its tokens and
 * cost, and saves the prompt tried as a new version.
 */
import { useState } from 'react';
import { formatTime } from '../../shared/format.ts';
import { useLoaded } from '../../shared/hooks.ts';
import { Grid, WordsCell } from '../../shared/lists.tsx';
import { type PromptVersion, promptsApi } from './api.ts';
import { Playground } from './playground.tsx';
import { PromptDetail } from './prompt-detail.tsx';
import { folderEntries } from './prompt-view.ts';

export function Prompts({ projectId }: { projectId: string }) {
  const {
    data: prompts,
    error,
    reload,
  } = useLoaded(() => promptsApi.prompts(projectId).then((p) => p.data), [projectId]);
  const [folder, setFolder] = useState('');
  const [selected, setSelected] = useState<string | undefined>();
  const [draft, setDraft] = useState<PromptVersion | undefined>();
  const [generation, setGeneration] = useState(0);

  const changed = () => {
    setGeneration((g) => g + 1);
    void reload();
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
