import { type Attributes, attr } from './attributes.ts';

/** `gen_ai.operation.name` values of agent spans (OTel GenAI, Vercel AI SDK's `@ai-sdk/otel`). */
const AGENT_OPERATIONS: ReadonlySet<unknown> = new Set(['invoke_agent', 'agent_step']);

/**
 * An agent span's `gen_ai.usage.*` and model repeat, as totals, the model calls beneath it; taking
 * them would make the agent a second priced generation and count the trace's cost twice, so the
 * reference leaves model, usage and cost out on these spans, and so do we.
 */
export function carriesAggregateUsage(attrs: Attributes): boolean {
  return AGENT_OPERATIONS.has(attr(attrs, 'gen_ai.operation.name'));
}
