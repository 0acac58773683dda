/**
 * Prompt composition as the reference has it: a prompt's text (or a chat message's content) may
 * hold `@@@langfusePrompt:name=NAME|label=LABEL@@@` or `…|version=N@@@`, replaced on read by the
 * referenced text prompt, itself resolved the same way. A reference to a missing prompt, to a chat
 * prompt, a cycle, or nesting deeper than the reference allows is refused with a 400 naming it.
 * Pure: versions come from the `lookup` the caller passes (the store reads PostgreSQL).
 */
import { BadRequest } from '../../kernel/errors.ts';
import type { PromptSelector } from './rules.ts';

/** The reference's nesting bound. */
export const MAX_NESTING_DEPTH = 5;

const TAG = /@@@langfusePrompt:(.*?)@@@/g;

export interface PromptReference {
  /** The tag as written, replaced by the referenced text. */
  tag: string;
  name: string;
  selector: PromptSelector;
}

/** The tag's fields, or undefined when it is not a well-formed reference (then it stays as text). */
function parseTag(tag: string, body: string): PromptReference | undefined {
  const fields = new Map<string, string>();
  for (const part of body.split('|')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const name = fields.get('name');
  const version = fields.get('version');
  const label = fields.get('label');
  if (!name || (version === undefined) === (label === undefined)) return undefined;
  if (version !== undefined) {
    if (!/^[1-9]\d{0,9}$/.test(version)) return undefined;
    return { tag, name, selector: { version: Number(version) } };
  }
  return label ? { tag, name, selector: { label } } : undefined;
}

/** The well-formed references in a text. */
export function referencesIn(text: string): PromptReference[] {
  return [...text.matchAll(TAG)].flatMap((m) => parseTag(m[0], m[1]!) ?? []);
}

/** Every text of a prompt that may hold references: the text, or each chat message's content. */
function textsOf(prompt: unknown): string[] {
  if (typeof prompt === 'string') return [prompt];
  if (!Array.isArray(prompt)) return [];
  return prompt.flatMap((m) =>
    m && typeof m === 'object' && typeof (m as { content?: unknown }).content === 'string'
      ? [(m as { content: string }).content]
      : [],
  );
}

function mapTexts(prompt: unknown, fn: (text: string) => string): unknown {
  if (typeof prompt === 'string') return fn(prompt);
  if (!Array.isArray(prompt)) return prompt;
  return prompt.map((m) =>
    m && typeof m === 'object' && typeof (m as { content?: unknown }).content === 'string'
      ? { ...m, content: fn((m as { content: string }).content) }
      : m,
  );
}

export const describeReference = (r: Pick<PromptReference, 'name' | 'selector'>): string =>
  'version' in r.selector
    ? `${r.name} version ${r.selector.version}`
    : `${r.name} with label ${r.selector.label}`;

export interface ComposableVersion {
  id: string;
  name: string;
  version: number;
  type: 'text' | 'chat';
  prompt: unknown;
}

export type Lookup = (name: string, selector: PromptSelector) => Promise<ComposableVersion | undefined>;

export interface ResolutionNode {
  id: string;
  name: string;
  version: number;
}

/** Which versions the resolution used: the root, and each version's direct dependencies by its id. */
export interface ResolutionGraph {
  root: ResolutionNode;
  dependencies: Record<string, ResolutionNode[]>;
}

const nodeOf = (v: ComposableVersion): ResolutionNode => ({ id: v.id, name: v.name, version: v.version });

/**
 * The prompt with every reference replaced, and the graph of versions used (null when it has no
 * reference). Throws BadRequest naming the missing reference, the chat prompt referenced, the cycle
 * (by prompt names, a prompt reaching itself by any version or label) or the depth exceeded.
 */
export async function resolveComposition(
  root: ComposableVersion,
  lookup: Lookup,
): Promise<{ prompt: unknown; graph: ResolutionGraph | null }> {
  const dependencies: Record<string, ResolutionNode[]> = {};
  const resolveText = async (text: string, path: readonly string[]): Promise<string> => {
    let out = text;
    for (const ref of referencesIn(text)) {
      const found = await resolveReference(ref, path);
      out = out.split(ref.tag).join(found);
    }
    return out;
  };
  const resolveReference = async (ref: PromptReference, path: readonly string[]): Promise<string> => {
    if (path.includes(ref.name))
      throw new BadRequest(`Circular prompt reference: ${[...path, ref.name].join(' -> ')}`);
    if (path.length > MAX_NESTING_DEPTH)
      throw new BadRequest(
        `Prompt references nest deeper than ${MAX_NESTING_DEPTH} levels at ${describeReference(ref)}`,
      );
    const target = await lookup(ref.name, ref.selector);
    if (!target) throw new BadRequest(`Referenced prompt not found: ${describeReference(ref)}`);
    if (target.type !== 'text' || typeof target.prompt !== 'string')
      throw new BadRequest(
        `Referenced prompt ${describeReference(ref)} is a chat prompt: only text prompts can be referenced`,
      );
    const parent = dependencies[idOf(path)] ?? [];
    if (!parent.some((n) => n.id === target.id)) parent.push(nodeOf(target));
    dependencies[idOf(path)] = parent;
    ids.set([...path, ref.name].join('\0'), target.id);
    return resolveText(target.prompt, [...path, ref.name]);
  };
  const ids = new Map<string, string>([[root.name, root.id]]);
  const idOf = (path: readonly string[]) => ids.get(path.join('\0'))!;

  const texts = textsOf(root.prompt);
  const resolved = new Map<string, string>();
  for (const text of texts) {
    if (!resolved.has(text)) resolved.set(text, await resolveText(text, [root.name]));
  }
  if (Object.keys(dependencies).length === 0) return { prompt: root.prompt, graph: null };
  return {
    prompt: mapTexts(root.prompt, (t) => resolved.get(t) ?? t),
    graph: { root: nodeOf(root), dependencies },
  };
}
