/**
 * Prompt management rules, pure: request shapes, label names, which labels a new version gets,
 * and which version a read selects. The SQL that applies them lives in `store.ts`.
 */
import { z } from 'zod';

export const LATEST = 'latest';
export const PRODUCTION = 'production';

const labelName = z
  .string()
  .min(1)
  .max(36)
  .regex(/^[a-z0-9_\-.]+$/, 'labels are lowercase letters, digits, underscores, hyphens or periods');

const chatMessage = z.union([
  z.object({ type: z.literal('placeholder'), name: z.string().min(1) }),
  z.object({ role: z.string().min(1), content: z.string(), type: z.literal('chatmessage').nullish() }),
]);

const common = {
  // Folders are `/`-separated name segments; the SDKs URL-encode the slash on reads.
  name: z
    .string()
    .min(1)
    .max(255)
    .refine((s) => !s.split('/').includes(''), 'folder segments of a prompt name must not be empty'),
  config: z.unknown().optional(),
  labels: z.array(labelName).nullish(),
  tags: z.array(z.string().min(1)).nullish(),
  commitMessage: z.string().max(500).nullish(),
};

export const createPromptRequest = z.discriminatedUnion('type', [
  z.object({ ...common, type: z.literal('chat'), prompt: z.array(chatMessage) }),
  z.object({ ...common, type: z.literal('text'), prompt: z.string() }),
]);
export type CreatePromptRequest = z.infer<typeof createPromptRequest>;

/** Text prompts may omit `type` (the SDKs' text request makes it optional). */
export function withDefaultType(body: unknown): unknown {
  if (body && typeof body === 'object' && !Array.isArray(body) && (body as { type?: unknown }).type == null) {
    return { ...body, type: 'text' };
  }
  return body;
}

export const updateLabelsRequest = z.object({
  newLabels: z
    .array(labelName)
    .refine((l) => !l.includes(LATEST), `"${LATEST}" is managed by the service and cannot be set`),
});

const unique = (xs: string[]) => [...new Set(xs)];

/** A new version carries the requested labels and `latest`, which moves to it. */
export function labelsOfNewVersion(requested: readonly string[] | null | undefined): string[] {
  return unique([...(requested ?? []), LATEST]);
}

/** A label update adds the new labels to the version's own. */
export function labelsAfterUpdate(current: readonly string[], added: readonly string[]): string[] {
  return unique([...current, ...added]);
}

export type PromptSelector = { version: number } | { label: string };

/** What a read asks for: a version, or a label (`production` when neither is given). */
export function selectorOf(query: {
  version?: number | undefined;
  label?: string | undefined;
}): PromptSelector {
  if (query.version !== undefined) return { version: query.version };
  return { label: query.label ?? PRODUCTION };
}

export function describeSelector(name: string, s: PromptSelector): string {
  return 'version' in s
    ? `Prompt not found: '${name}' version ${s.version}`
    : `Prompt not found: '${name}' with label '${s.label}'`;
}

export interface PromptVersion {
  name: string;
  version: number;
  type: 'text' | 'chat';
  labels: string[];
  tags: string[];
  config: unknown;
  updatedAt: string;
}

export interface PromptMeta {
  name: string;
  type: 'text' | 'chat';
  versions: number[];
  labels: string[];
  tags: string[];
  lastUpdatedAt: string;
  lastConfig: unknown;
}

/**
 * One entry per prompt name, in the order names first appear: its versions ascending, the labels
 * of any of them, and the type, tags and config of its newest version.
 */
export function summarizeVersions(versions: readonly PromptVersion[]): PromptMeta[] {
  const byName = new Map<string, PromptVersion[]>();
  for (const v of versions) byName.set(v.name, [...(byName.get(v.name) ?? []), v]);
  return [...byName.values()].map((list) => {
    const sorted = [...list].sort((a, b) => a.version - b.version);
    const newest = sorted.at(-1)!;
    return {
      name: newest.name,
      type: newest.type,
      versions: sorted.map((v) => v.version),
      labels: unique(sorted.flatMap((v) => v.labels)).sort(),
      tags: newest.tags,
      lastUpdatedAt: sorted
        .map((v) => v.updatedAt)
        .sort()
        .at(-1)!,
      lastConfig: newest.config,
    };
  });
}
