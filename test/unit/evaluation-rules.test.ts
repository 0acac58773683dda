import { describe, expect, it } from 'vitest';
import { PublicApiError } from '../../server/features/evaluation/errors.ts';
import { keyedLimiter } from '../../server/features/evaluation/job.ts';
import {
  buildJudged,
  buildJudgedEvents,
  type JudgedRow,
  mappedValues,
} from '../../server/features/evaluation/judged.ts';
import {
  answerSchema,
  checkAnswer,
  type OutputDefinition,
} from '../../server/features/evaluation/outputs.ts';
import {
  checkMapping,
  checkRuleFilters,
  jsonPathProblem,
  promptVariables,
  renderPrompt,
  ruleFilterColumns,
  sampled,
  selectValue,
} from '../../server/features/evaluation/rules.ts';
import {
  buildSample,
  buildScan,
  cursorsBefore,
  nextScan,
  PENDING_PER_RULE,
  resumeAt,
  rulesWithRoom,
  scanExecutions,
  scanSources,
  windowEnd,
} from '../../server/features/evaluation/scan.ts';
import type { FilterCondition } from '../../server/features/reads/filters.ts';

describe('prompt variables', () => {
  it('are the placeholders in order of first appearance, rendered as text or JSON', () => {
    const prompt = 'Q: {{ input }} A: {{output}} again {{input}} {{meta.tier}} {{missing}}';
    expect(promptVariables(prompt)).toEqual(['input', 'output', 'meta.tier', 'missing']);
    expect(renderPrompt(prompt, { input: 'hi', output: { a: 1 }, 'meta.tier': null })).toBe(
      'Q: hi A: {"a":1} again hi  {{missing}}',
    );
  });
});

describe('JSONPath', () => {
  it.each([
    ['$.customer.tier', undefined],
    ['$[*].name', undefined],
    ["$['a b']", undefined],
    ['$[', 'JSONPath expressions must use balanced quotes, brackets, and parentheses.'],
    ["$['a]", 'JSONPath expressions must use balanced quotes, brackets, and parentheses.'],
    ['customer.tier', 'JSONPath expressions must start with $.'],
  ])('%s', (path, problem) => expect(jsonPathProblem(path)).toBe(problem));

  it('selects one match as itself, several as a list, from objects or JSON text', () => {
    expect(selectValue({ customer: { tier: 'gold' } }, '$.customer.tier')).toBe('gold');
    expect(selectValue('{"calls":[{"name":"a"},{"name":"b"}]}', '$.calls[*].name')).toEqual(['a', 'b']);
    expect(selectValue({ a: 1 }, '$.b')).toBeUndefined();
    expect(selectValue('plain text', '$.a')).toBeUndefined();
    expect(selectValue('plain text', undefined)).toBe('plain text');
  });
});

describe('sampling', () => {
  it('is deterministic per key and close to the fraction', () => {
    const keys = Array.from({ length: 4000 }, (_, i) => `rule:${i}`);
    const picked = keys.filter((k) => sampled(0.25, k));
    expect(picked.length / keys.length).toBeGreaterThan(0.2);
    expect(picked.length / keys.length).toBeLessThan(0.3);
    expect(keys.filter((k) => sampled(0.25, k))).toEqual(picked);
    expect(keys.every((k) => sampled(1, k))).toBe(true);
  });
});

describe('outputs', () => {
  const reasoning = { description: 'why' };
  const numeric: OutputDefinition = {
    dataType: 'NUMERIC',
    reasoning,
    score: { description: 's', minValue: 0, maxValue: 1 },
  };
  const boolean: OutputDefinition = { dataType: 'BOOLEAN', reasoning, score: { description: 's' } };
  const categorical: OutputDefinition = {
    dataType: 'CATEGORICAL',
    reasoning,
    score: { description: 's', categories: ['yes', 'no'], shouldAllowMultipleMatches: false },
  };
  it('asks for an enum for categories, a boolean, or a number, and a bounded reasoning', () => {
    expect(answerSchema(categorical)).toMatchObject({
      required: ['score', 'reasoning'],
      additionalProperties: false,
      properties: { score: { enum: ['yes', 'no'] }, reasoning: { type: 'string', maxLength: 300 } },
    });
    expect(answerSchema(boolean)).toMatchObject({ properties: { score: { type: 'boolean' } } });
    expect(answerSchema(numeric)).toMatchObject({ properties: { score: { type: 'number' } } });
  });
  it.each([
    [numeric, { score: 0.5, reasoning: 'ok' }, { ok: true, value: 0.5 }],
    [numeric, { score: 4, reasoning: 'ok' }, { ok: false, reason: 'answer.score 4 is outside [0, 1]' }],
    [numeric, { score: '1', reasoning: 'ok' }, { ok: false }],
    [boolean, { score: true, reasoning: 'ok' }, { ok: true, value: 1 }],
    [categorical, { score: 'no', reasoning: 'r' }, { ok: true, value: 'no', reasoning: 'r' }],
    [
      categorical,
      { score: 'maybe', reasoning: 'r' },
      { ok: false, reason: 'answer.score "maybe" is not one of yes, no' },
    ],
    [categorical, { score: 'yes' }, { ok: false, reason: 'answer.reasoning is not a string' }],
    [categorical, [1], { ok: false }],
  ] as const)('%#: checks an answer', (d, answer, expected) =>
    expect(checkAnswer(d, answer)).toMatchObject(expected),
  );
});

describe('per-connection limit', () => {
  it('runs at most `size` at once per key, the others in order, and other keys freely', async () => {
    const limit = keyedLimiter(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const task = (i: number) => async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      order.push(i);
      return i;
    };
    const other = limit('b', async () => 'b');
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => limit('a', task(i))));
    expect(results).toEqual([1, 2, 3, 4, 5]);
    expect(peak).toBe(2);
    expect(await other).toBe('b');
    await expect(limit('a', async () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(await limit('a', async () => 'after a failure')).toBe('after a failure');
  });
});

describe('rule scan', () => {
  const WINDOW = { to: '2026-11-26T10:01:00.000Z' };
  const scanned = (projectId: string, scanCursor: string, filter: FilterCondition[] = []) => ({
    projectId,
    scanCursor,
    filter,
  });
  const byName = (name: string): FilterCondition[] => [
    { type: 'stringOptions', column: 'name', operator: 'any of', value: [name] },
  ];

  it.each([
    [
      'one rule: its project, cursor and filters, the window up to `to`',
      [scanned('p1', '2026-11-26T10:00:00.000001Z', byName('qa'))],
      [
        'p1',
        '2026-11-26 10:00:00.000001',
        ['qa'],
        ['p1'],
        '2026-11-26 10:00:00.000001',
        '2026-11-26 10:01:00.000000',
      ],
      [
        "(project_id = {p0:String} AND created_at > toDateTime64({p1:String}, 6, 'UTC') AND name IN {p2:Array(String)})",
      ],
    ],
    [
      'rules of two projects: one flag each, the window from the oldest cursor, each project once',
      [
        scanned('p1', '2026-11-26T10:00:30.000Z', byName('a')),
        scanned('p2', '2026-11-26T09:59:00.000Z'),
        scanned('p1', '2026-11-26T10:00:10.000Z', byName('b')),
      ],
      [
        'p1',
        '2026-11-26 10:00:30.000000',
        ['a'],
        'p2',
        '2026-11-26 09:59:00.000000',
        'p1',
        '2026-11-26 10:00:10.000000',
        ['b'],
        ['p1', 'p2'],
        '2026-11-26 09:59:00.000000',
        '2026-11-26 10:01:00.000000',
      ],
      [
        "(project_id = {p0:String} AND created_at > toDateTime64({p1:String}, 6, 'UTC') AND name IN {p2:Array(String)})",
        "(project_id = {p3:String} AND created_at > toDateTime64({p4:String}, 6, 'UTC'))",
        "(project_id = {p5:String} AND created_at > toDateTime64({p6:String}, 6, 'UTC') AND name IN {p7:Array(String)})",
      ],
    ],
  ] as const)('%s', (_, rules, params, flags) => {
    const q = buildScan('observation', rules, WINDOW);
    expect(Object.values(q.params)).toEqual(params);
    expect(q.sql).toContain(`[${flags.join(', ')}] AS matched FROM events_full FINAL`);
    expect(q.sql).toContain(`AND (${flags.join(' OR ')})\n`);
    expect(q.sql).toContain('project_id IN {p');
    expect(q.sql).toMatch(/created_at > toDateTime64\(\{p\d+:String\}, 6, 'UTC'\) AND created_at <= /);
    // A page of 1000 rows per rule: each rule moves as far per pass as with a statement of its own.
    expect(q.sql).toMatch(new RegExp(`ORDER BY created_at LIMIT ${1000 * rules.length}$`));
  });

  it('binds every value of every rule: a project or filter value is never SQL text', () => {
    const q = buildScan(
      'observation',
      [
        scanned("p1' OR 1=1 --", '2026-11-26T10:00:00.000Z', [
          { type: 'stringOptions', column: 'name', operator: 'any of', value: ["qa'; DROP"] },
          { type: 'arrayOptions', column: 'calledToolNames', operator: 'any of', value: ['search'] },
        ]),
        scanned('p2', '2026-11-26T10:00:00.000Z', byName("x') OR (1=1")),
      ],
      WINDOW,
    );
    expect(q.sql).not.toContain('DROP');
    expect(q.sql).not.toContain('1=1');
    expect(q.sql).toContain('hasAny(tool_call_names, {p3:Array(String)})');
    expect(Object.values(q.params)).toContainEqual(["qa'; DROP"]);
    expect(Object.values(q.params)).toContainEqual(["p1' OR 1=1 --", 'p2']);
  });

  it.each([
    ['a row flagged for both rules: judged by each rule’s evaluators', [1, 1], ['r1/e1', 'r2/e2', 'r2/e3']],
    ['a row flagged for the second rule only (booleans too)', [false, true], ['r2/e2', 'r2/e3']],
    ['a row flagged for neither (before both cursors, or no filter matches)', [0, 0], []],
  ])('%s', (_, matched, expected) => {
    const rules = [
      { id: 'r1', projectId: 'p1', sampling: 1, assignments: [{ evaluatorId: 'e1', mapping: null }] },
      {
        id: 'r2',
        projectId: 'p2',
        sampling: 1,
        assignments: [
          { evaluatorId: 'e2', mapping: null },
          { evaluatorId: 'e3', mapping: null },
        ],
      },
    ];
    const row = { id: 'o1', trace_id: 't1', at: '2026-11-26 10:00:00.123456', created_at: '', matched };
    const items = scanExecutions(rules, [row]);
    expect(items.map((e) => `${e.ruleId}/${e.evaluatorId}`)).toEqual(expected);
    for (const e of items) {
      expect(e).toMatchObject({
        traceId: 't1',
        observationId: 'o1',
        observationStartTime: '2026-11-26T10:00:00.123Z',
      });
      expect(e.projectId).toBe(e.ruleId === 'r1' ? 'p1' : 'p2');
    }
  });

  it('sampling stays per rule and row', () => {
    const rows = Array.from({ length: 400 }, (_, i) => ({
      id: `o${i}`,
      trace_id: 't',
      at: '2026-11-26 10:00:00',
      created_at: '',
      matched: [1],
    }));
    const rule = {
      id: 'r1',
      projectId: 'p1',
      sampling: 0.5,
      assignments: [{ evaluatorId: 'e1', mapping: null }],
    };
    const kept = scanExecutions([rule], rows).map((e) => e.observationId);
    expect(kept).toEqual(rows.filter((r) => sampled(0.5, `r1:${r.id}`)).map((r) => r.id));
    expect(kept.length).toBeGreaterThan(150);
    expect(kept.length).toBeLessThan(250);
  });

  it.each([
    ['before `next`: moved', '2026-11-26T10:00:00.000001Z', true],
    ['at `next` (microseconds kept): left', '2026-11-26T10:00:05.000123Z', false],
    [
      'past `next` (its page cut short by older rules’ rows): left, never moved back',
      '2026-11-26T10:00:06.000Z',
      false,
    ],
  ])('a cursor %s', (_, scanCursor, moved) => {
    expect(cursorsBefore([{ scanCursor }], '2026-11-26T10:00:05.000123Z')).toHaveLength(moved ? 1 : 0);
  });
});

describe("a rule's delay", () => {
  const NOW = Date.parse('2026-11-26T10:01:00.000Z');
  it.each([
    ['no delay: the scan lag', 0, '2026-11-26T10:00:59.000Z'],
    ['a delay shorter than the lag: the lag', 500, '2026-11-26T10:00:59.000Z'],
    ['the default 10 s: 10 s ago', 10_000, '2026-11-26T10:00:50.000Z'],
  ])('ends its window (%s)', (_, delay, end) => {
    expect(windowEnd(NOW, 1_000, delay)).toBe(end);
  });

  it('bounds only its own flag: rows that arrived after its window end are not its yet', () => {
    const q = buildScan(
      'observation',
      [
        {
          projectId: 'p1',
          scanCursor: '2026-11-26T10:00:00.000Z',
          filter: [],
          until: '2026-11-26T10:00:50.000Z',
        },
        { projectId: 'p1', scanCursor: '2026-11-26T10:00:00.000Z', filter: [] },
      ],
      { to: '2026-11-26T10:00:59.000Z' },
    );
    expect(q.sql).toContain(
      "[(project_id = {p0:String} AND created_at > toDateTime64({p1:String}, 6, 'UTC') AND created_at <= toDateTime64({p2:String}, 6, 'UTC')), (project_id = {p3:String} AND created_at > toDateTime64({p4:String}, 6, 'UTC'))] AS matched",
    );
    expect(q.params['p2']).toBe('2026-11-26 10:00:50.000000');
  });

  it.each([
    [
      'its window ends before the pass resumes: at its window end',
      '2026-11-26T10:00:50.000Z',
      '2026-11-26T10:00:50.000Z',
    ],
    ['its window ends after: where the pass resumes', '2026-11-26T10:01:30.000Z', '2026-11-26T10:00:55.000Z'],
    ['no window of its own: where the pass resumes', undefined, '2026-11-26T10:00:55.000Z'],
  ])('resumes (%s)', (_, until, at) => {
    expect(resumeAt(until === undefined ? {} : { until }, '2026-11-26T10:00:55.000Z')).toBe(at);
  });

  it('leaves a cursor already at its window end', () => {
    const rule = { scanCursor: '2026-11-26T10:00:50.000Z', until: '2026-11-26T10:00:50.000Z' };
    expect(cursorsBefore([rule], '2026-11-26T10:00:55.000Z')).toEqual([]);
  });
});

describe('where the next scan resumes', () => {
  const at = (...times: string[]) => times.map((created_at) => ({ created_at }));
  const TO = '2026-11-26T10:01:00.000Z';
  it.each([
    ['a page that is not full: at the window end', at('2026-11-26 10:00:01.000000'), 3, { cursor: TO }],
    ['an empty page: at the window end', at(), 3, { cursor: TO }],
    [
      'a full page ending inside a group of equal times: before the group, which is read again',
      at('2026-11-26 10:00:01.000001', '2026-11-26 10:00:02.500000', '2026-11-26 10:00:02.500000'),
      3,
      { cursor: '2026-11-26T10:00:01.000001Z' },
    ],
    [
      'a full page of distinct times: before the last one (microseconds kept)',
      at('2026-11-26 10:00:01.000001', '2026-11-26 10:00:01.000002', '2026-11-26 10:00:01.000003'),
      3,
      { cursor: '2026-11-26T10:00:01.000002Z' },
    ],
    [
      'a full page of one time: that group read whole, then after it',
      at('2026-11-26 10:00:05.000', '2026-11-26 10:00:05.000'),
      2,
      { cursor: '2026-11-26T10:00:05.000Z', tie: '2026-11-26T10:00:05.000Z' },
    ],
  ])('%s', (_, rows, limit, expected) => {
    expect(nextScan(rows, TO, limit)).toEqual(expected);
  });

  it('a group of one time is read whole, by equality and without the page order', () => {
    const q = buildScan(
      'observation',
      [{ projectId: 'p1', scanCursor: '2026-11-26T10:00:00.000Z', filter: [] }],
      { at: '2026-11-26T10:00:05.000123Z' },
    );
    expect(q.sql).toContain("created_at = toDateTime64({p3:String}, 6, 'UTC')");
    expect(q.sql).not.toContain('ORDER BY');
    expect(Object.values(q.params)).toEqual([
      'p1',
      '2026-11-26 10:00:00.000000',
      ['p1'],
      '2026-11-26 10:00:05.000123',
    ]);
  });
});

describe('experiment rules', () => {
  const experimentRule = (filter: FilterCondition[]) => [
    { projectId: 'p1', scanCursor: '2026-11-26T10:00:00.000Z', filter },
  ];

  const window = { to: '2026-11-26T10:01:00.000Z' };
  const byDataset: FilterCondition[] = [
    { type: 'stringOptions', column: 'datasetId', operator: 'any of', value: ['ds-1'] },
  ];

  it('scan only experiment item root observations of the events, by the experiment’s dataset', () => {
    const q = buildScan('experiment', experimentRule(byDataset), window);
    expect(q.sql).toContain('FROM events_full FINAL');
    expect(q.sql).toContain("experiment_id != '' AND span_id = experiment_item_root_span_id");
    expect(q.sql).toMatch(/experiment_dataset_id IN \{p\d+:Array\(String\)\}/);
    expect(Object.values(q.params)).toContainEqual(['ds-1']);
    const observation = buildScan('observation', experimentRule([]), window);
    expect(observation.sql).not.toContain('experiment_item_root_span_id');
  });

  it('scan the dataset run items where the legacy tables are written: an observation, or a trace alone', () => {
    const q = buildScan('run_item', experimentRule(byDataset), window);
    expect(q.sql).toMatch(/^SELECT coalesce\(observation_id, trace_id\) AS id, trace_id,/);
    expect(q.sql).toContain('FROM dataset_run_items_rmt FINAL');
    expect(q.sql).toMatch(/dataset_id IN \{p\d+:Array\(String\)\}/);
    expect(q.sql).not.toContain('environment');
  });

  it.each([
    ['legacy', { writesEventsTables: false, writesLegacyTables: true }, ['trace', 'run_item']],
    ['dual', { writesEventsTables: true, writesLegacyTables: true }, ['observation', 'trace', 'run_item']],
    ['events_only', { writesEventsTables: true, writesLegacyTables: false }, ['observation', 'experiment']],
  ] as const)('in %s the worker scans %o', (_mode, behaviour, sources) => {
    expect(scanSources(behaviour)).toEqual(sources);
  });

  it.each([
    ['experiment', 'obs', 'FROM events_full FINAL', 'experiment_item_expected_output AS expected_output'],
    ['run_item', 'obs', 'FROM observations FINAL', 'FROM dataset_run_items_rmt FINAL'],
    ['run_item', 'trace-1', 'FROM traces FINAL', 'FROM dataset_run_items_rmt FINAL'],
    ['trace', 'trace-1', 'FROM traces FINAL', "'' AS expected_output"],
  ] as const)('a %s execution on %s reads %s and %s', (source, observationId, row, item) => {
    const q = buildJudged(
      { projectId: 'p1', traceId: 'trace-1', observationId, observationStartTime: window.to },
      source,
    );
    expect(q.query).toContain(row);
    expect(q.query).toContain(item);
    expect(Object.values(q.params)).toContain('p1');
  });

  it('a claimed batch reads its observations of events_full in one statement, each row with its key', () => {
    const keys = ['o1', 'o2', 'o3'].map((observationId, i) => ({
      projectId: `p${i % 2}`,
      traceId: `t${i}`,
      observationId,
      observationStartTime: window.to,
    }));
    const q = buildJudgedEvents(keys);
    expect(q.query.match(/SELECT/g)).toHaveLength(1);
    expect(q.query).toMatch(/^SELECT project_id, trace_id, span_id, input, output,/);
    expect(q.query).toContain('WHERE (project_id, trace_id, span_id, start_time) IN ((');
    expect(q.query).toContain('LIMIT 1 BY project_id, trace_id, span_id');
    for (const k of keys)
      expect(Object.values(q.params)).toEqual(
        expect.arrayContaining([k.projectId, k.traceId, k.observationId]),
      );
    expect(buildJudged(keys[0]!, 'observation')).toEqual(buildJudgedEvents([keys[0]!]));
  });

  it.each([
    ['no execution waiting', new Map<string, number>(), ['a', 'b']],
    ['one below the limit', new Map([['a', PENDING_PER_RULE - 1]]), ['a', 'b']],
    ['at the limit: held', new Map([['a', PENDING_PER_RULE]]), ['b']],
    [
      'past it (a page more): held',
      new Map([
        ['a', PENDING_PER_RULE + 900],
        ['b', 5],
      ]),
      ['b'],
    ],
  ])('a pass scans the rules with room in the queue: %s', (_, pending, scanned) => {
    expect(rulesWithRoom([{ id: 'a' }, { id: 'b' }], pending).map((r) => r.id)).toEqual(scanned);
  });

  const code = (f: () => void) => {
    try {
      f();
      return undefined;
    } catch (err) {
      return err instanceof PublicApiError ? [err.code, err.apiDetails?.field] : err;
    }
  };

  it.each([
    [
      'experiment',
      { type: 'stringOptions', column: 'datasetId', operator: 'none of', value: ['a'] },
      undefined,
    ],
    [
      'experiment',
      { type: 'string', column: 'datasetId', operator: '=', value: 'a' },
      ['invalid_filter_value', 'filter[0].type'],
    ],
    [
      'experiment',
      { type: 'stringOptions', column: 'name', operator: 'any of', value: ['qa'] },
      ['invalid_filter_value', 'filter[0].column'],
    ],
    [
      'observation',
      { type: 'stringOptions', column: 'datasetId', operator: 'any of', value: ['a'] },
      ['invalid_filter_value', 'filter[0].column'],
    ],
  ] as const)('a %s rule filtering %o: %o', (target, filter, expected) => {
    expect(code(() => checkRuleFilters(target, [filter as FilterCondition]))).toEqual(expected);
  });

  it.each([
    ['experiment', 'expected_output', undefined],
    ['experiment', 'experiment_item_metadata', undefined],
    ['experiment', 'tool_calls', undefined],
    ['observation', 'expected_output', ['invalid_variable_mapping', 'mapping[0].source']],
    ['observation', 'experiment_item_metadata', ['invalid_variable_mapping', 'mapping[0].source']],
    ['trace', 'expected_output', ['invalid_variable_mapping', 'mapping[0].source']],
  ] as const)('a %s rule mapping from %s: %o', (target, source, expected) => {
    expect(code(() => checkMapping([{ variable: 'x', source }], ['x'], target))).toEqual(expected);
  });
});

describe('the rules page', () => {
  const row: JudgedRow = {
    input: JSON.stringify({ question: 'Capital of France?', history: ['a', 'b'] }),
    output: 'Paris',
    metadata_names: ['tier', 'ctx'],
    metadata_values: ['gold', JSON.stringify({ lang: 'en' })],
    tool_calls: [JSON.stringify({ name: 'search', arguments: { q: 'france' } })],
    environment: 'default',
    expected_output: '',
    item_metadata_names: [],
    item_metadata_values: [],
  };
  const item: JudgedRow = {
    ...row,
    expected_output: JSON.stringify({ city: 'Paris' }),
    item_metadata_names: ['difficulty'],
    item_metadata_values: ['easy'],
  };
  it.each([
    [{ variable: 'v', source: 'input', jsonPath: '$.question' }, 'Capital of France?'],
    [{ variable: 'v', source: 'input', jsonPath: '$.history[*]' }, ['a', 'b']],
    [{ variable: 'v', source: 'input', jsonPath: '$.nothing' }, undefined],
    [{ variable: 'v', source: 'output' }, 'Paris'],
    [{ variable: 'v', source: 'output', jsonPath: '$.x' }, undefined],
    [{ variable: 'v', source: 'metadata', jsonPath: '$.tier' }, 'gold'],
    [{ variable: 'v', source: 'metadata', jsonPath: '$.ctx.lang' }, 'en'],
    [{ variable: 'v', source: 'tool_calls', jsonPath: '$[0].arguments.q' }, 'france'],
    [{ variable: 'v', source: 'expected_output' }, undefined],
    [{ variable: 'v', source: 'experiment_item_metadata' }, {}],
  ] as const)('previews %o as the judge resolves it', (entry, value) => {
    expect(mappedValues(row, [entry])).toEqual({ v: value });
  });

  it.each([
    [{ variable: 'v', source: 'expected_output' }, { city: 'Paris' }],
    [{ variable: 'v', source: 'expected_output', jsonPath: '$.city' }, 'Paris'],
    [{ variable: 'v', source: 'experiment_item_metadata', jsonPath: '$.difficulty' }, 'easy'],
    [{ variable: 'v', source: 'output' }, 'Paris'],
  ] as const)('resolves %o on an experiment item', (entry, value) => {
    expect(mappedValues(item, [entry])).toEqual({ v: value });
  });

  it.each([
    [
      'observation',
      { name: 'string', calledToolNames: 'array', toolCalls: 'number', isRootObservation: 'boolean' },
    ],
    ['trace', { name: 'string', release: 'string', tags: 'array', metadata: 'metadata' }],
    ['experiment', { datasetId: 'string' }],
  ] as const)('offers the %s filter columns with their kinds', (target, some) => {
    const columns = ruleFilterColumns(target);
    expect(columns).toMatchObject(some);
    expect(columns).not.toHaveProperty('latency');
  });

  it.each([
    [undefined, ['p1', ['qa']]],
    ['obs-1', ['p1', 'obs-1', ['qa']]],
  ] as const)('samples the newest matching row (id %s), values bound', (id, params) => {
    const q = buildSample(
      {
        projectId: 'p1',
        source: 'observation',
        filter: [{ type: 'stringOptions', column: 'name', operator: 'any of', value: ['qa'] }],
      },
      id,
    );
    expect(q.sql).toContain('FROM events_full FINAL');
    expect(q.sql).toContain("NOT startsWith(environment, 'langfuse-')");
    expect(q.sql).toMatch(/ORDER BY created_at DESC LIMIT 1$/);
    expect(/span_id = \{p\d+:String\}/.test(q.sql)).toBe(id !== undefined);
    expect(Object.values(q.params)).toEqual(params);
  });
});
