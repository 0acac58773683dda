/**
 * The prompts page's pure helpers: the folder view of `/`-separated names, the `{{variables}}` a
 * prompt asks for, a prompt as editable text, and a line diff between two versions.
 */

export interface FolderEntry {
  /** The segment shown: a folder's name or a prompt's last segment. */
  label: string;
  /** A folder's path (`a/b`) or a prompt's full name. */
  path: string;
  kind: 'folder' | 'prompt';
}

/** What a folder (`''` for the top) shows: its sub-folders first, then its prompts, each once. */
export function folderEntries(names: readonly string[], folder: string): FolderEntry[] {
  const prefix = folder === '' ? '' : `${folder}/`;
  const folders = new Set<string>();
  const prompts: FolderEntry[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const rest = name.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash === -1) prompts.push({ label: rest, path: name, kind: 'prompt' });
    else folders.add(rest.slice(0, slash));
  }
  return [
    ...[...folders].sort().map((f): FolderEntry => ({ label: f, path: `${prefix}${f}`, kind: 'folder' })),
    ...prompts.sort((a, b) => a.label.localeCompare(b.label)),
  ];
}

/** The variable names of a text or chat prompt, in order of first use. */
export function variablesOf(prompt: unknown): string[] {
  const texts =
    typeof prompt === 'string'
      ? [prompt]
      : Array.isArray(prompt)
        ? prompt.map((m) => (typeof m?.content === 'string' ? (m.content as string) : ''))
        : [];
  const names = texts.flatMap((t) => [...t.matchAll(/\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g)].map((m) => m[1]!));
  return [...new Set(names)];
}

/** A prompt as lines to read and compare: a text as is, a chat prompt one `role: content` per message. */
export function promptText(prompt: unknown): string {
  if (typeof prompt === 'string') return prompt;
  if (!Array.isArray(prompt)) return JSON.stringify(prompt, null, 2);
  return prompt
    .map((m) => (m?.type === 'placeholder' ? `[placeholder: ${m.name}]` : `${m?.role}: ${m?.content}`))
    .join('\n');
}

export interface DiffLine {
  op: 'same' | 'removed' | 'added';
  text: string;
}

/** Line diff by longest common subsequence (prompts are short: quadratic is fine). */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: 'same', text: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: 'removed', text: a[i++]! });
    else out.push({ op: 'added', text: b[j++]! });
  }
  while (i < a.length) out.push({ op: 'removed', text: a[i++]! });
  while (j < b.length) out.push({ op: 'added', text: b[j++]! });
  return out;
}
