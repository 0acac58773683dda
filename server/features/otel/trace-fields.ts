import { type Attributes, attr, firstMeaningful, firstText, isMeaningful, isTrue, LF } from './attributes.ts';

/** `key` in the observation's metadata, then in the trace's (as LangChain and OpenAI send it). */
const inMetadata = (key: string) => [`${LF.OBSERVATION_METADATA}.${key}`, `${LF.TRACE_METADATA}.${key}`];

/** Sources of the user id, first match wins (Langfuse, OTel convention, LangChain/OpenAI metadata, Vercel AI SDK). */
export const USER_ID_KEYS = [
  LF.USER_ID,
  'user.id',
  ...inMetadata('langfuse_user_id'),
  'ai.telemetry.metadata.userId',
];

/** Sources of the session id, first match wins. */
export const SESSION_ID_KEYS = [
  LF.SESSION_ID,
  'session.id',
  'gen_ai.conversation.id',
  ...inMetadata('langfuse_session_id'),
  'ai.telemetry.metadata.sessionId',
];

/** Sources of trace tags, first match wins (LlamaIndex uses `tag.tags`). */
export const TAG_KEYS = [
  LF.TRACE_TAGS,
  'langfuse.tags',
  ...inMetadata('langfuse_tags'),
  'ai.telemetry.metadata.tags',
  'tag.tags',
];

export function extractUserId(attrs: Attributes): string | null {
  return firstText(attrs, USER_ID_KEYS);
}

export function extractSessionId(attrs: Attributes): string | null {
  return firstText(attrs, SESSION_ID_KEYS);
}

/** Tags arrive as an array attribute, a JSON array string, a comma-separated list, or one bare tag. */
export function extractTags(attrs: Attributes): string[] {
  const value = firstMeaningful(attrs, TAG_KEYS);
  if (value === undefined) return [];
  if (Array.isArray(value)) return value.filter(isMeaningful).map(String);
  if (typeof value !== 'string') return [String(value)];
  const text = value.trim();
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed.filter(isMeaningful).map(String);
    } catch {
      // Not JSON after all: fall through to the comma form.
    }
  }
  if (text.includes(','))
    return text
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
  return [text];
}

/** `langfuse.trace.public` (or legacy `langfuse.public`); null when neither is sent, so "not sent" ≠ "private". */
export function extractPublic(attrs: Attributes): boolean | null {
  const value = attr(attrs, LF.TRACE_PUBLIC) ?? attr(attrs, 'langfuse.public');
  if (value === undefined || value === null) return null;
  return isTrue(value);
}
