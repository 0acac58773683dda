/**
 * Observation-level evaluation end to end against a real model: the JS SDK (`@langfuse/tracing`
 * 5.x over OTLP) sends observations to `observatory web`; an LLM connection, an evaluator and an
 * observation rule are created through the public API; `observatory worker` finds the matching
 * observations, asks the judge (llama.cpp's server with SmolLM2-135M on 127.0.0.1, reached only
 * because 127.0.0.1 is whitelisted) through the `openai` adapter, and the `EVAL` scores are read
 * back through `GET /api/public/v3/scores`, each linked to the judge's own call, a trace in the
 * environment `langfuse-llm-as-a-judge` read through `GET /api/public/v2/observations`. Observation rules read version 4 events, so they run
 * in the two modes that write them: events_only, then dual (dual_write, with the preview) on the
 * same stores; legacy writes no events and runs none. Also: a judgment whose model server was
 * killed is retried and completes once the server is back, one that keeps failing ends as ERROR
 * with its reason, a worker without the whitelist refuses the call (the address is checked on
 * every call, not only when the connection was stored), and the rule pauses when its connection
 * is deleted, and a rule whose queue is full holds its scan until the queue drains.
 * Last, a Legacy trace-level rule judges a trace the release 3 SDK sent in dual, is listed by the
 * producers report, and stops in events_only.
 * The model's verdicts are not judged (a 135M model), only what the service makes of them.
 */
import { randomBytes } from 'node:crypto';
import { startObservation } from '@langfuse/tracing';
import { Langfuse } from 'langfuse';
import pgLib from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PENDING_PER_RULE } from '../../server/features/evaluation/scan.ts';
import { callJson, type JsonBody } from '../fixtures/api-client.ts';
import {
  booleanEvaluator,
  JUDGE_CATEGORIES,
  JUDGE_MODEL,
  type Judge,
  judgeConnection,
  judgeScore,
  qaEvaluator,
  qaGenerationRule,
  startJudge,
} from '../fixtures/judge.ts';
import { llmConnectionEnv } from '../fixtures/llm-connection-env.ts';
import { freePort } from '../fixtures/ports.ts';
import { withSdkTracer } from '../fixtures/sdk-tracer.ts';
import { cli as cliRun, MODE_ENV, startWeb, startWorker } from '../fixtures/service.ts';
import { type ServiceSuite, startServiceSuite, stopServiceSuite } from '../fixtures/service-suite.ts';
import { createProjectMember, request, signIn } from '../fixtures/ui-client.ts';
import { waitFor as waitUntil } from '../fixtures/wait.ts';

let suite: ServiceSuite;
let judge: Judge;
let db: pgLib.Client;

beforeAll(async () => {
  judge = await startJudge();
  suite = await startServiceSuite({
    project: 'judged',
    worker: true,
    env: { ...MODE_ENV.events_only, ...llmConnectionEnv(), LOG_LEVEL: 'info' },
  });
  db = new pgLib.Client({ connectionString: suite.pg.url });
  await db.connect();
}, 240_000);

afterAll(async () => {
  await db?.end();
  await stopServiceSuite(suite, judge);
});

type Body = JsonBody;
const call = (method: string, path: string, body?: unknown) =>
  callJson(`${suite.web.url}/api/public`, suite.project, method, path, body);

const CONNECTION = () => judgeConnection(judge);

/** Sends one `qa` generation (judged) and one `lookup` span (filtered out); returns their ids. */
async function sendQa(question: string, answer: string) {
  return withSdkTracer(suite.project, suite.web.url, () => {
    const root = startObservation('lookup', { input: { question } });
    const gen = root.startObservation(
      'qa',
      { input: { question }, model: 'app-model' },
      { asType: 'generation' },
    );
    gen.update({ output: answer });
    gen.end();
    root.end();
    return { traceId: gen.traceId, generationId: gen.id, spanId: root.id };
  });
}

async function evalScores(o: { traceId: string; id: string }): Promise<Body[]> {
  const res = await call(
    'GET',
    `/v3/scores?fields=details,subject&source=EVAL&traceId=${o.traceId}&observationId=${o.id}`,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

/** A judgment on this machine takes longer than the fixture's default wait. */
const waitFor = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000) =>
  waitUntil(what, probe, timeoutMs);

const execution = async (observationId: string) =>
  (await db.query('SELECT * FROM evaluation_executions WHERE observation_id = $1', [observationId]))
    .rows[0] as Body | undefined;

let ruleId: string;
let evaluatorId: string;

describe('observation rules judged by a real model', () => {
  it('judges the matching observations the SDK sent and stores EVAL scores readable through scores v3', async () => {
    expect((await call('PUT', '/llm-connections', CONNECTION())).status).toBe(200);
    const evaluator = await call('POST', '/unstable/evaluators', qaEvaluator());
    expect(evaluator.status).toBe(200);
    evaluatorId = evaluator.body.id;
    const rule = await call('POST', '/unstable/evaluation-rules', qaGenerationRule('qa-live'));
    expect(rule.body).toMatchObject({ status: 'active' });
    ruleId = rule.body.id;

    const cpuBefore = judge.cpuSeconds();
    const t0 = Date.now();
    const a = await sendQa('What is the capital of France?', 'Paris');
    const b = await sendQa('How much is 12 times 12?', '124');
    const scores = await Promise.all(
      [a, b].map((o) =>
        waitFor(`the EVAL score of ${o.generationId}`, async () => {
          const s = await evalScores({ traceId: o.traceId, id: o.generationId });
          return s.length > 0 ? s : undefined;
        }),
      ),
    );
    const wall = (Date.now() - t0) / 1000;
    const cpu = judge.cpuSeconds() - cpuBefore;
    process.stderr.write(
      `judge: 2 judgments in ${wall.toFixed(1)} s wall (incl. ingestion and scan), ${cpu.toFixed(2)} CPU-s of the model server\n`,
    );

    for (const [i, o] of [a, b].entries()) {
      const [score, ...more] = scores[i]! as [Body, ...Body[]];
      expect(more).toEqual([]);
      expect(score).toMatchObject({
        name: 'qa-correctness',
        source: 'EVAL',
        dataType: 'CATEGORICAL',
        environment: 'default',
        subject: { kind: 'observation', id: o.generationId, traceId: o.traceId },
        metadata: { evaluation_rule_id: ruleId, evaluator_id: evaluatorId, evaluator_version: '1' },
      });
      expect(JUDGE_CATEGORIES).toContain(score.value);
      expect(typeof score.comment).toBe('string');
      expect(score.comment.length).toBeGreaterThan(0);
      const row = await execution(o.generationId);
      expect(row).toMatchObject({ status: 'COMPLETED', score_id: score.id, rule_id: ruleId, error: null });
      // The score links to the judge's own call, a trace of the project in its own environment.
      const traceFilter = [
        { type: 'string', column: 'traceId', operator: '=', value: score.metadata.execution_trace_id },
      ];
      const judgeCall = await call(
        'GET',
        `/v2/observations?fields=core,basic,io,model&filter=${encodeURIComponent(JSON.stringify(traceFilter))}`,
      );
      expect(judgeCall.body.data).toHaveLength(1);
      expect(judgeCall.body.data[0]).toMatchObject({
        type: 'GENERATION',
        name: 'Execute evaluator: qa-correctness',
        environment: 'langfuse-llm-as-a-judge',
        level: 'DEFAULT',
      });
      expect(JSON.stringify(judgeCall.body.data[0])).toContain(String(score.value));
      // The span named `lookup` matches neither filter: no execution, no score.
      expect(await execution(o.spanId)).toBeUndefined();
      expect(await evalScores({ traceId: o.traceId, id: o.spanId })).toEqual([]);
    }
  });

  it('a judgment whose model server died is retried with backoff and completes once the server is back', async () => {
    await judge.kill();
    const o = await sendQa('Name a primary colour.', 'Blue');
    const failed = await waitFor('a failed first attempt', async () => {
      const row = await execution(o.generationId);
      return row?.error ? row : undefined;
    });
    expect(failed).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect(failed.error).toMatch(/^provider unreachable: .*ECONNREFUSED/);
    await judge.restart();
    const [score] = await waitFor('the score after the restart', async () => {
      const s = await evalScores({ traceId: o.traceId, id: o.generationId });
      return s.length > 0 ? s : undefined;
    });
    expect(score).toMatchObject({ source: 'EVAL', name: 'qa-correctness' });
    const done = await execution(o.generationId);
    expect(done).toMatchObject({ status: 'COMPLETED', error: null });
    expect(done!.attempts).toBeGreaterThanOrEqual(2);
  });

  it('a judgment that keeps failing ends as ERROR with its reason after its attempts, and stores no score', async () => {
    const deadPort = await freePort();
    expect(
      (
        await call('PUT', '/llm-connections', {
          ...CONNECTION(),
          provider: 'dead-judge',
          baseURL: `http://127.0.0.1:${deadPort}/v1`,
        })
      ).status,
    ).toBe(200);
    const evaluator = await call(
      'POST',
      '/unstable/evaluators',
      booleanEvaluator('dead-check', 'Answer: {{answer}}', 'Fine?', {
        provider: 'dead-judge',
        model: JUDGE_MODEL,
      }),
    );
    expect(evaluator.status).toBe(200);
    const rule = await call('POST', '/unstable/evaluation-rules', {
      name: 'dead-live',
      evaluator: { name: 'dead-check' },
      target: 'observation',
      enabled: true,
      filter: [{ type: 'stringOptions', column: 'name', operator: 'any of', value: ['dead-qa'] }],
      mapping: [{ variable: 'answer', source: 'output' }],
    });
    expect(rule.status).toBe(200);
    const o = await withSdkTracer(suite.project, suite.web.url, () => {
      const gen = startObservation('dead-qa', { input: 'hi' }, { asType: 'generation' });
      gen.update({ output: 'hello' });
      gen.end();
      return { traceId: gen.traceId, generationId: gen.id };
    });
    // Four attempts, 2 + 4 + 8 s apart.
    const failed = await waitFor('the final failure', async () => {
      const row = await execution(o.generationId);
      return row?.status === 'ERROR' ? row : undefined;
    });
    expect(failed).toMatchObject({
      attempts: 4,
      rule_id: rule.body.id,
      score_id: null,
      provider: 'dead-judge',
    });
    expect(failed.error).toMatch(/^provider unreachable: .*ECONNREFUSED.* \(after 4 attempts\)$/);
    expect(await evalScores({ traceId: o.traceId, id: o.generationId })).toEqual([]);
    expect((await call('DELETE', `/unstable/evaluation-rules/${rule.body.id}`)).status).toBe(200);
  });

  it('the worker checks the address again on every call: without the whitelist it refuses and records why', async () => {
    await suite.worker?.stop();
    suite.worker = await startWorker({ ...suite.env, SERVICE_LLM_CONNECTION_WHITELISTED_IPS: '' });
    try {
      const o = await sendQa('Is this call allowed?', 'No');
      const refused = await waitFor('the refused judgment', async () => {
        const row = await execution(o.generationId);
        return row?.status === 'ERROR' ? row : undefined;
      });
      expect(refused.error).toMatch(/^refused: host 127\.0\.0\.1 resolves to 127\.0\.0\.1, a loopback/);
      expect(refused.attempts).toBe(1);
      expect(await evalScores({ traceId: o.traceId, id: o.generationId })).toEqual([]);
    } finally {
      await suite.worker?.stop();
      suite.worker = await startWorker(suite.env);
    }
  });

  it('a rule whose queue is full holds its scan, and judges what waited once the queue drains', async () => {
    // A backlog of PENDING_PER_RULE executions not yet due (the judge is busy): the rule may not add more.
    const backlog = Array.from({ length: PENDING_PER_RULE }, (_, i) => `backlog-${i}`);
    await db.query(
      `INSERT INTO evaluation_executions (id, project_id, rule_id, evaluator_id, trace_id, observation_id, observation_start_time, next_attempt_at)
       SELECT 'x-' || o, $1, $2, $3, 't-' || o, o, now(), now() + interval '1 hour' FROM unnest($4::text[]) AS o`,
      [suite.project.projectId, ruleId, evaluatorId, backlog],
    );
    const cursor = async () =>
      (await db.query('SELECT scan_cursor FROM evaluation_rules WHERE id = $1', [ruleId])).rows[0]
        .scan_cursor;
    const held = await cursor();
    const o = await sendQa('Which planet is the largest?', 'Jupiter');
    await waitFor('the observation to be stored', async () => {
      const res = await call(
        'GET',
        `/v2/observations?filter=${encodeURIComponent(JSON.stringify([{ type: 'string', column: 'id', operator: '=', value: o.generationId }]))}`,
      );
      return res.body.data?.length ? res.body.data : undefined;
    });
    // Several 2 s passes: the rule's cursor stays and nothing is enqueued for the new generation.
    await new Promise((r) => setTimeout(r, 6_000));
    expect(await cursor()).toEqual(held);
    expect(await execution(o.generationId)).toBeUndefined();
    // The rule's execution log in the UI says so.
    const member = await createProjectMember(
      suite.env,
      `member-${randomBytes(3).toString('hex')}@example.com`,
      suite.project.projectId,
      'member',
    );
    const log = await request(
      await signIn(suite.web.url, member),
      'GET',
      `/api/ui/projects/${suite.project.projectId}/evaluation-rules/${ruleId}/executions?limit=5`,
    );
    expect(log.status).toBe(200);
    expect(log.body.queue).toEqual({ waiting: PENDING_PER_RULE, holdsAt: PENDING_PER_RULE });
    // The judge catches up (here: the backlog is cancelled): the scan resumes where it held.
    await db.query("UPDATE evaluation_executions SET status = 'CANCELLED' WHERE id LIKE 'x-%'");
    const [score] = await waitFor('the score of what waited', async () => {
      const s = await evalScores({ traceId: o.traceId, id: o.generationId });
      return s.length > 0 ? s : undefined;
    });
    expect(score).toMatchObject({ source: 'EVAL', name: 'qa-correctness' });
    expect(await execution(o.generationId)).toMatchObject({ status: 'COMPLETED', rule_id: ruleId });
  });

  it('deleting the connection pauses the rule, and later observations are not judged', async () => {
    const conn = ((await call('GET', '/llm-connections')).body.data as Body[]).find(
      (c) => c['provider'] === 'local-judge',
    );
    expect((await call('DELETE', `/llm-connections/${conn!.id}`)).status).toBe(200);
    expect((await call('GET', `/unstable/evaluation-rules/${ruleId}`)).body).toMatchObject({
      enabled: true,
      status: 'paused',
      pausedReason: 'LLM_CONNECTION_DELETED',
    });
    const o = await sendQa('Is water wet?', 'Yes');
    // The scan runs every 2 s: after several passes, nothing was enqueued for the paused rule.
    const seen = await waitFor('the observation to be stored', async () => {
      const res = await call(
        'GET',
        `/v2/observations?filter=${encodeURIComponent(JSON.stringify([{ type: 'string', column: 'id', operator: '=', value: o.generationId }]))}`,
      );
      return res.body.data?.length ? res.body.data : undefined;
    });
    expect(seen).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 6_000));
    expect(await execution(o.generationId)).toBeUndefined();
    expect(await evalScores({ traceId: o.traceId, id: o.generationId })).toEqual([]);
  });
});

describe('in write mode dual with the preview (the other mode that writes version 4 events)', () => {
  it('judges an observation the SDK sent through the dual-write path', async () => {
    await Promise.all([suite.web.stop(), suite.worker?.stop()]);
    const dual = {
      ...suite.env,
      SERVICE_MIGRATION_V4_WRITE_MODE: 'dual',
      SERVICE_MIGRATION_V4_NATIVE_OTEL_BEHAVIOUR: 'dual_write',
      SERVICE_MIGRATION_V4_ALLOW_PREVIEW_OPT_IN: 'true',
      SERVICE_EVENT_PROPAGATION_INTERVAL_SECONDS: '1',
      SERVICE_EVENT_PROPAGATION_GRACE_SECONDS: '0',
    };
    suite.web = await startWeb(dual);
    suite.worker = await startWorker(dual);
    expect((await call('PUT', '/llm-connections', CONNECTION())).status).toBe(200);
    expect(
      (await call('PATCH', `/unstable/evaluation-rules/${ruleId}`, { enabled: true })).body,
    ).toMatchObject({
      status: 'active',
    });
    const o = await sendQa('What colour is the sky?', 'Blue');
    const [score] = await waitFor('the EVAL score in dual', async () => {
      const s = await evalScores({ traceId: o.traceId, id: o.generationId });
      return s.length > 0 ? s : undefined;
    });
    expect(score).toMatchObject({
      source: 'EVAL',
      name: 'qa-correctness',
      dataType: 'CATEGORICAL',
      metadata: { evaluation_rule_id: ruleId, evaluator_id: evaluatorId },
    });
    expect(JUDGE_CATEGORIES).toContain(score!.value);
    expect(await execution(o.spanId)).toBeUndefined();
  });

  // The release 3 SDK's generation is staged, and reaches events_full only when its 3-minute staging
  // partition is propagated, keeping its staging created_at, which the rule's scan has long passed.
  it('judges a generation a release 3 SDK sent, once the propagation has copied it', async () => {
    const sdk = new Langfuse({
      publicKey: suite.project.publicKey,
      secretKey: suite.project.secretKey,
      baseUrl: suite.web.url,
    });
    const trace = sdk.trace({ name: 'delayed-sdk' });
    const gen = trace.generation({ name: 'qa', model: 'app-model', input: { question: 'Is water wet?' } });
    gen.end({ output: 'Yes' });
    const other = trace.generation({ name: 'not-qa', input: { question: 'Filtered out' } });
    other.end({ output: 'x' });
    await sdk.shutdownAsync();
    const [score, ...more] = await waitFor(
      'the EVAL score of the propagated generation',
      async () => {
        const s = await evalScores({ traceId: trace.id, id: gen.id });
        return s.length > 0 ? s : undefined;
      },
      300_000,
    );
    expect(more).toEqual([]);
    expect(score).toMatchObject(judgeScore('qa-correctness', ruleId, evaluatorId));
    expect(await execution(other.id)).toBeUndefined();
  }, 330_000);
});

describe('Legacy trace-level evaluators: run in dual, listed for the cutover, stopped in events_only', () => {
  let traceRuleId: string;

  it('judges a trace the release 3 SDK sent, and stores the EVAL score on the trace', async () => {
    const rule = await call('POST', '/unstable/evaluation-rules', {
      name: 'qa-trace',
      evaluator: { name: 'qa-correctness', type: 'llm_as_judge' },
      target: 'trace',
      enabled: true,
      filter: [{ type: 'stringOptions', column: 'name', operator: 'any of', value: ['qa-trace'] }],
      mapping: [
        { variable: 'question', source: 'input', jsonPath: '$.question' },
        { variable: 'answer', source: 'output' },
      ],
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(200);
    expect(rule.body).toMatchObject({ target: 'trace', legacy: true, status: 'active' });
    traceRuleId = rule.body.id;

    const sdk = new Langfuse({
      publicKey: suite.project.publicKey,
      secretKey: suite.project.secretKey,
      baseUrl: suite.web.url,
    });
    const judged = sdk.trace({ name: 'qa-trace', input: { question: 'What is 2 + 2?' }, output: '4' });
    const skipped = sdk.trace({ name: 'other', input: { question: 'Not matched' }, output: 'x' });
    await sdk.shutdownAsync();

    const [score, ...more] = await waitFor('the trace-level EVAL score', async () => {
      const res = await call('GET', `/v3/scores?fields=details,subject&source=EVAL&traceId=${judged.id}`);
      return res.body.data.length > 0 ? (res.body.data as Body[]) : undefined;
    });
    expect(more).toEqual([]);
    expect(score).toMatchObject(
      judgeScore('qa-correctness', traceRuleId, evaluatorId, { kind: 'trace', id: judged.id }),
    );
    expect(JUDGE_CATEGORIES).toContain(score!.value);
    expect(await execution(skipped.id)).toBeUndefined();
  });

  it('the producers report lists it as stopping at the cutover', async () => {
    const res = await fetch(`${suite.worker!.url}/api/producers?since=1h`);
    const report = (await res.json()) as Body;
    expect(report.legacyEvaluators).toEqual([
      { projectId: suite.project.projectId, ruleId: traceRuleId, name: 'qa-trace' },
    ]);
    const cli = await cliRun(['producers', '--since', '1h'], suite.env);
    expect(cli.stdout).toContain('trace-level evaluator "qa-trace"');
  });

  it('the migration page converts a trace-level rule into an observation rule on root observations', async () => {
    const created = await call('POST', '/unstable/evaluation-rules', {
      name: 'qa-trace-conv',
      evaluator: { name: 'qa-correctness', type: 'llm_as_judge' },
      target: 'trace',
      enabled: true,
      sampling: 0.5,
      filter: [{ type: 'stringOptions', column: 'name', operator: 'any of', value: ['qa-trace'] }],
      mapping: [
        { variable: 'question', source: 'input', jsonPath: '$.question' },
        { variable: 'answer', source: 'output' },
      ],
    });
    expect(created.status).toBe(200);
    const owner = await createProjectMember(
      suite.env,
      `owner-${randomBytes(3).toString('hex')}@example.com`,
      suite.project.projectId,
      'owner',
    );
    const b = await signIn(suite.web.url, owner);
    const page = await request(b, 'GET', '/api/ui/migration');
    expect(page.body.producers.legacyEvaluators.map((e: Body) => e.name).sort()).toEqual([
      'qa-trace',
      'qa-trace-conv',
    ]);
    const converted = await request(
      b,
      'POST',
      `/api/ui/projects/${suite.project.projectId}/evaluation-rules/${created.body.id}/convert`,
      { headers: { 'x-csrf-token': b.csrf } },
    );
    expect(converted.status, JSON.stringify(converted.body)).toBe(200);
    expect(converted.body).toMatchObject({
      name: 'qa-trace-conv (observation)',
      target: 'observation',
      legacy: false,
      status: 'active',
      sampling: 0.5,
      filter: [
        { type: 'stringOptions', column: 'traceName', operator: 'any of', value: ['qa-trace'] },
        { type: 'boolean', column: 'isRootObservation', operator: '=', value: true },
      ],
      evaluators: [
        {
          evaluator: { name: 'qa-correctness' },
          mapping: [
            { variable: 'question', source: 'input', jsonPath: '$.question' },
            { variable: 'answer', source: 'output' },
          ],
        },
      ],
    });
    const old = await call('GET', `/unstable/evaluation-rules/${created.body.id}`);
    expect(old.body).toMatchObject({ target: 'trace', status: 'inactive' });
    const after = await request(b, 'GET', '/api/ui/migration');
    expect(after.body.producers.legacyEvaluators.map((e: Body) => e.name)).toEqual(['qa-trace']);
  });

  it('in events_only: not enabled again, and an execution left from dual is cancelled with the reason', async () => {
    await Promise.all([suite.web.stop(), suite.worker?.stop()]);
    // Left in the queue by a scan in dual, as if the cutover came before its judgment.
    await db.query(
      `INSERT INTO evaluation_executions (id, project_id, rule_id, evaluator_id, trace_id, observation_id, observation_start_time)
       VALUES ('left-over', $1, $2, $3, 'left-trace', 'left-trace', now())`,
      [suite.project.projectId, traceRuleId, evaluatorId],
    );
    suite.web = await startWeb(suite.env);
    suite.worker = await startWorker(suite.env);
    const left = await waitFor('the left-over execution settled', async () => {
      const e = await execution('left-trace');
      return e && e['status'] !== 'PENDING' ? e : undefined;
    });
    expect(left).toMatchObject({
      status: 'CANCELLED',
      error: 'trace-level evaluators stop at the cutover to events_only',
    });
    const again = await call('PATCH', `/unstable/evaluation-rules/${traceRuleId}`, { name: 'qa-trace-2' });
    expect(again.status).toBe(422);
    expect(JSON.stringify(again.body)).toContain('target');
    const disabled = await call('PATCH', `/unstable/evaluation-rules/${traceRuleId}`, { enabled: false });
    expect(disabled.body).toMatchObject({ status: 'inactive', legacy: true });
  });
});
