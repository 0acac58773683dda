/**
 * The judge's own execution trace: one GENERATION written into the evaluated project's events in
 * the dedicated environment `langfuse-llm-as-a-judge` (the reference's), holding the prompt, the
 * raw answer, the model and the usage, so a score links to the call that made it. Pure.
 */
import { randomBytes } from 'node:crypto';
import type { OtelObservation } from '../otel/types.ts';

export const JUDGE_ENVIRONMENT = 'langfuse-llm-as-a-judge';

export interface JudgeCall {
  evaluatorName: string;
  model: string;
  messages: unknown;
  answerText: string;
  usage: { input?: number; output?: number };
  startTime: string;
  endTime: string;
  level: 'DEFAULT' | 'ERROR';
  statusMessage: string | null;
  metadata: Record<string, string>;
}

export function judgeTrace(c: JudgeCall): OtelObservation {
  const usage: Record<string, number> = {};
  if (c.usage.input !== undefined) usage['input'] = c.usage.input;
  if (c.usage.output !== undefined) usage['output'] = c.usage.output;
  const none = null;
  return {
    traceId: randomBytes(16).toString('hex'),
    spanId: randomBytes(8).toString('hex'),
    parentSpanId: '',
    name: `Execute evaluator: ${c.evaluatorName}`,
    type: 'GENERATION',
    startTime: c.startTime,
    endTime: c.endTime,
    completionStartTime: none,
    environment: JUDGE_ENVIRONMENT,
    level: c.level,
    statusMessage: c.statusMessage,
    version: none,
    release: none,
    input: JSON.stringify(c.messages),
    output: c.answerText,
    metadata: c.metadata,
    userId: none,
    sessionId: none,
    tags: [],
    traceName: `Execute evaluator: ${c.evaluatorName}`,
    public: none,
    modelName: c.model,
    modelParameters: {},
    usageDetails: usage,
    costDetails: {},
    promptName: none,
    promptVersion: none,
    isAppRoot: true,
    asRoot: true,
    trace: {
      name: none,
      input: none,
      output: none,
      metadata: {},
      userId: none,
      sessionId: none,
      tags: [],
      public: none,
      version: none,
      release: none,
    },
    experiment: none,
    instrumentation: {
      serviceName: 'observatory-worker',
      serviceVersion: none,
      scopeName: none,
      scopeVersion: none,
      sdkLanguage: none,
      sdkName: none,
      sdkVersion: none,
      ingestionSdkName: 'observatory-evaluator',
      ingestionSdkVersion: '1',
    },
  };
}
