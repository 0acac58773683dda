/**
 * The prompt playground's rules, pure: the request, the messages a text or chat prompt becomes once
 * its variables and message placeholders are filled, and who may put the protected `production`
 * label on a version (owners only, as the reference's protected labels).
 */
import { z } from 'zod';
import { BadRequest } from '../../kernel/errors.ts';
import type { Role } from '../../kernel/roles.ts';
import { renderPrompt } from '../evaluation/rules.ts';
import type { ChatMessage } from '../llm-connections/adapters.ts';
import { PRODUCTION } from './rules.ts';

const message = z.object({ role: z.string().min(1), content: z.string() });
const chatPrompt = z.array(
  z.union([z.object({ type: z.literal('placeholder'), name: z.string().min(1) }), message.loose()]),
);

export const playgroundRequest = z
  .object({
    /** The connection's provider name. */
    provider: z.string().min(1),
    model: z.string().min(1).max(200),
    /** The prompt's name when it is one being edited: a reference back to it is a cycle. */
    name: z.string().max(255).default('playground'),
    type: z.enum(['text', 'chat']),
    prompt: z.union([z.string(), chatPrompt]),
    variables: z.record(z.string(), z.string()).default({}),
    placeholders: z.record(z.string(), z.array(message)).default({}),
    maxTokens: z.number().int().min(1).max(4096).default(256),
    temperature: z.number().min(0).max(2).default(0),
  })
  .refine((r) => (r.type === 'text') === (typeof r.prompt === 'string'), {
    message: 'a text prompt is a string, a chat prompt a list of messages',
    path: ['prompt'],
  });
export type PlaygroundRequest = z.output<typeof playgroundRequest>;

/** The messages sent: a text prompt is one user message; placeholders take their messages. */
export function messagesOf(
  prompt: unknown,
  variables: Record<string, string>,
  placeholders: Record<string, ChatMessage[]>,
): ChatMessage[] {
  if (typeof prompt === 'string') return [{ role: 'user', content: renderPrompt(prompt, variables) }];
  return (prompt as Record<string, unknown>[]).flatMap((m) => {
    if (m['type'] === 'placeholder') {
      const name = String(m['name']);
      const filled = placeholders[name];
      if (!filled) throw new BadRequest(`placeholders.${name}: the prompt's placeholder has no messages`);
      return filled;
    }
    return [{ role: String(m['role']), content: renderPrompt(String(m['content']), variables) }];
  });
}

/** Why a user of `role` may not set these labels, or undefined. */
export function protectedLabelProblem(role: Role, labels: readonly string[]): string | undefined {
  return labels.includes(PRODUCTION) && role !== 'owner'
    ? `only owners may set the protected "${PRODUCTION}" label`
    : undefined;
}
