/**
 * One judgment: the observation's mapped values rendered into the evaluator's prompt, sent to the
 * evaluator's connection with the answer's JSON schema, the answer checked, and the score written
 * with source `EVAL` under the execution's id. Decides whether a failure is retried or final.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { LlmSettings } from '../../kernel/config/env.ts';
import { buildCall, readAnswer, usageOf } from '../llm-connections/adapters.ts';
import { findUsableConnection, type UsableConnection } from '../llm-connections/connection-store.ts';
import { AddressRefused, postJson } from '../llm-connections/guarded-http.ts';
import { eventsRow } from '../otel/rows.ts';
import type { IngestionStore } from '../write-model/store.ts';
import { chTime } from '../write-model/time.ts';
import type { Execution, Outcome } from './executions.ts';
import { type JudgeCall, judgeTrace } from './judge-trace.ts';
import { type JudgedRow, mappedValues } from './judged.ts';
import { answerSchema, checkAnswer, type Judgment } from './outputs.ts';
import { isLegacyTarget, type MappingEntry, renderPrompt } from './rules.ts';
import { type ScanSource, sourceOf } from './scan.ts';
import { type Evaluator, findEvaluator, findRule, pauseRulesOfProvider, type Rule } from './store.ts';

export interface JudgeDeps {
  pool: pg.Pool;
  analytics: ClickHouseClient;
  store: IngestionStore;
  llm: LlmSettings;
  /** Attempts before a retryable failure becomes final. */
  maxAttempts: number;
  /** Backoff before attempt n+1: base * 2^(n-1). */
  backoffBaseMs: number;
  timeoutMs: number;
  /** The legacy tables are written: trace-level (Legacy) rules still run. */
  legacyTargetsRun: boolean;
}

const SYSTEM =
  'You are an evaluator. Read the task and the data, then answer only with a JSON object with the fields "score" and "reasoning" as the schema describes.';
/** Enough for the score and a reasoning of REASONING_MAX_CHARS. */
const MAX_TOKENS = 160;

/** Writes the judge's call as a trace of the evaluated project; returns its trace id. */
async function writeJudgeTrace(deps: JudgeDeps, e: Execution, c: JudgeCall): Promise<string> {
  const o = judgeTrace(c);
  const attribution = { apiKey: '', sdkName: 'observatory-evaluator', sdkVersion: '1' };
  await deps.store.insert('events_full', [eventsRow(o, e.projectId, attribution, Date.now())]);
  return o.traceId;
}

const retryOrFail = (deps: JudgeDeps, e: Execution, error: string, provider: string): Outcome =>
  e.attempts < deps.maxAttempts
    ? { status: 'RETRY', error, provider, delayMs: deps.backoffBaseMs * 2 ** (e.attempts - 1) }
    : { status: 'ERROR', error: `${error} (after ${e.attempts} attempts)`, provider };

/** A claimed execution ready to be judged once its row is read: what its rule names, looked up. */
export interface Ready {
  e: Execution;
  rule: Rule;
  evaluator: Evaluator;
  mapping: MappingEntry[];
  connection: UsableConnection;
  source: ScanSource;
}

/** Looks a lookup up once per pass: the executions of one batch mostly share rule, evaluator and connection. */
export type Once = <T>(key: string, load: () => Promise<T>) => Promise<T>;

export function oncePerPass(): Once {
  const seen = new Map<string, Promise<unknown>>();
  return <T>(key: string, load: () => Promise<T>) => {
    let p = seen.get(key) as Promise<T> | undefined;
    if (!p) {
      p = load();
      seen.set(key, p);
    }
    return p;
  };
}

/** What a claimed execution needs before its row is read, or the outcome that ends it here. */
export async function prepare(deps: JudgeDeps, e: Execution, once: Once): Promise<Ready | Outcome> {
  const rule = await once(`rule/${e.projectId}/${e.ruleId}`, () =>
    findRule(deps.pool, e.projectId, e.ruleId),
  );
  if (!rule) return { status: 'CANCELLED', error: 'the evaluation rule was deleted' };
  if (isLegacyTarget(rule.target) && !deps.legacyTargetsRun)
    return { status: 'CANCELLED', error: 'trace-level evaluators stop at the cutover to events_only' };
  const assignment = rule.assignments.find((a) => a.evaluatorId === e.evaluatorId);
  const evaluator = await once(`evaluator/${e.projectId}/${e.evaluatorId}`, () =>
    findEvaluator(deps.pool, e.projectId, e.evaluatorId),
  );
  if (!assignment || !evaluator)
    return { status: 'CANCELLED', error: 'the evaluator was removed from the rule' };
  if (!evaluator.modelConfig)
    return { status: 'ERROR', error: `evaluator "${evaluator.name}" names no model` };
  const { provider } = evaluator.modelConfig;
  const key = deps.llm.encryptionKey;
  if (!key) return { status: 'ERROR', error: 'ENCRYPTION_KEY is not set on the worker', provider };
  const connection = await once(`connection/${e.projectId}/${provider}`, () =>
    findUsableConnection(deps.pool, key, e.projectId, provider),
  );
  if (!connection) {
    await once(`pause/${e.projectId}/${provider}`, () =>
      pauseRulesOfProvider(deps.pool, e.projectId, provider),
    );
    return {
      status: 'ERROR',
      error: `the LLM connection "${provider}" was deleted; the rule is paused`,
      provider,
    };
  }
  const mapping = assignment.mapping ?? evaluator.mapping ?? [];
  return { e, rule, evaluator, mapping, connection, source: sourceOf(rule.target, deps.legacyTargetsRun) };
}

/**
 * Judges a prepared execution on its row (undefined: not readable yet); `limit` bounds concurrent
 * calls per connection.
 */
export async function judgeReady(
  deps: JudgeDeps,
  { e, rule, evaluator, mapping, connection }: Ready,
  observation: JudgedRow | undefined,
  limit: (connectionKey: string, run: () => Promise<Outcome>) => Promise<Outcome>,
): Promise<Outcome> {
  const { provider, model } = evaluator.modelConfig!;
  if (!observation) return retryOrFail(deps, e, `the ${rule.target} is not readable yet`, provider);
  const values = mappedValues(observation, mapping);
  const call = buildCall(
    connection.adapter,
    connection.baseURL,
    connection.secretKey,
    connection.extraHeaders,
    {
      model,
      system: SYSTEM,
      user: renderPrompt(evaluator.prompt, values),
      schema: answerSchema(evaluator.outputDefinition),
      maxTokens: MAX_TOKENS,
    },
  );
  return limit(`${e.projectId}/${connection.id}`, async () => {
    let judgment: Judgment;
    let traceId: string;
    try {
      const startTime = new Date().toISOString();
      const res = await postJson(deps.llm, call.url, call.headers, call.body, deps.timeoutMs);
      const answer = readAnswer(connection.adapter, res.status, res.body, res.text);
      judgment = answer.ok
        ? checkAnswer(evaluator.outputDefinition, answer.value)
        : { ok: false, reason: answer.reason };
      traceId = await writeJudgeTrace(deps, e, {
        evaluatorName: evaluator.name,
        model,
        messages: (call.body as { messages?: unknown }).messages ?? call.body,
        answerText: res.text.slice(0, 100_000),
        usage: usageOf(res.body),
        startTime,
        endTime: new Date().toISOString(),
        level: judgment.ok ? 'DEFAULT' : 'ERROR',
        statusMessage: judgment.ok ? null : judgment.reason,
        metadata: { execution_id: e.id, evaluation_rule_id: rule.id, observation_id: e.observationId },
      });
      if (!answer.ok && !answer.retryable) return { status: 'ERROR', error: answer.reason, provider };
    } catch (err) {
      if (err instanceof AddressRefused)
        return { status: 'ERROR', error: `refused: ${err.message}`, provider };
      return retryOrFail(deps, e, `provider unreachable: ${(err as Error).message}`, provider);
    }
    if (!judgment.ok) return retryOrFail(deps, e, judgment.reason, provider);
    const now = Date.now();
    const categorical = judgment.dataType === 'CATEGORICAL';
    await deps.store.insert('scores', [
      {
        id: e.id,
        timestamp: chTime(now),
        project_id: e.projectId,
        environment: observation.environment || 'default',
        trace_id: e.traceId,
        session_id: null,
        dataset_run_id: null,
        // A judged trace (trace-level rule, or a run item naming only a trace) gets the trace's score.
        observation_id: e.observationId === e.traceId ? null : e.observationId,
        name: evaluator.name,
        value: categorical ? 0 : judgment.value,
        string_value: categorical
          ? judgment.value
          : judgment.dataType === 'BOOLEAN'
            ? judgment.value
              ? 'True'
              : 'False'
            : null,
        long_string_value: '',
        source: 'EVAL',
        comment: judgment.reasoning,
        metadata: {
          evaluation_rule_id: rule.id,
          evaluator_id: evaluator.id,
          evaluator_version: String(evaluator.version),
          execution_id: e.id,
          execution_trace_id: traceId,
        },
        author_user_id: null,
        config_id: null,
        data_type: judgment.dataType,
        queue_id: null,
        execution_trace_id: traceId,
        created_at: chTime(now),
        updated_at: chTime(now),
        event_ts: chTime(now),
        is_deleted: 0,
        ingestion_api_key: '',
        ingestion_sdk_name: 'observatory-evaluator',
        ingestion_sdk_version: '1',
      },
    ]);
    return { status: 'COMPLETED', scoreId: e.id, provider, evaluatorVersion: evaluator.version };
  });
}
