/**
 * The filter bar's text language against the structured filters of the Observations API v2,
 * by tables: each text, the filters the API documents for it (or the error and its position).
 */
import { describe, expect, it } from 'vitest';
import {
  type ColumnKind,
  formatFilters,
  parseFilterText,
} from '../../server/app/ui/src/shared/filter-syntax.ts';
import { OBSERVATION_COLUMNS } from '../../server/features/reads/events-columns.ts';
import { filterList } from '../../server/features/reads/filters.ts';

/** The columns as the server hands them to the UI (GET /api/ui/projects/:id). */
const COLUMNS = Object.fromEntries(
  Object.entries(OBSERVATION_COLUMNS).map(([name, c]) => [name, c.kind]),
) as Record<string, ColumnKind>;

const PARSES: [string, unknown[]][] = [
  ['', []],
  [
    'isRootObservation = true',
    [{ type: 'boolean', column: 'isRootObservation', operator: '=', value: true }],
  ],
  [
    'isRootObservation != false',
    [{ type: 'boolean', column: 'isRootObservation', operator: '<>', value: false }],
  ],
  ['name = "chat turn"', [{ type: 'string', column: 'name', operator: '=', value: 'chat turn' }]],
  ['name = chat', [{ type: 'string', column: 'name', operator: '=', value: 'chat' }]],
  ['name != "x"', [{ type: 'stringOptions', column: 'name', operator: 'none of', value: ['x'] }]],
  ['name contains "ch\\"at"', [{ type: 'string', column: 'name', operator: 'contains', value: 'ch"at' }]],
  ['name DOES NOT CONTAIN x', [{ type: 'string', column: 'name', operator: 'does not contain', value: 'x' }]],
  ['userId starts with u-', [{ type: 'string', column: 'userId', operator: 'starts with', value: 'u-' }]],
  [
    'level any of ["ERROR", WARNING]',
    [{ type: 'stringOptions', column: 'level', operator: 'any of', value: ['ERROR', 'WARNING'] }],
  ],
  ['sessionId is null', [{ type: 'null', column: 'sessionId', operator: 'is null' }]],
  ['sessionId is not null', [{ type: 'null', column: 'sessionId', operator: 'is not null' }]],
  ['latency>2.5', [{ type: 'number', column: 'latency', operator: '>', value: 2.5 }]],
  ['totalCost <= 1e-3', [{ type: 'number', column: 'totalCost', operator: '<=', value: 0.001 }]],
  [
    'startTime >= 2026-01-31T12:00:00Z',
    [{ type: 'datetime', column: 'startTime', operator: '>=', value: '2026-01-31T12:00:00Z' }],
  ],
  [
    'tags all of ["a", "b"]',
    [{ type: 'arrayOptions', column: 'tags', operator: 'all of', value: ['a', 'b'] }],
  ],
  ['tags none of []', [{ type: 'arrayOptions', column: 'tags', operator: 'none of', value: [] }]],
  [
    'metadata.customer = acme',
    [{ type: 'stringObject', column: 'metadata', key: 'customer', operator: '=', value: 'acme' }],
  ],
  ['metadata.tier > 2', [{ type: 'numberObject', column: 'metadata', key: 'tier', operator: '>', value: 2 }]],
  [
    'metadata.region any of [eu]',
    [{ type: 'stringOptions', column: 'metadata', key: 'region', operator: 'any of', value: ['eu'] }],
  ],
  [
    'input matches "aardvark burrow"',
    [{ type: 'string', column: 'input', operator: 'matches', value: 'aardvark burrow' }],
  ],
  [
    'isRootObservation = true and latency > 1 AND model = "gpt-4o"',
    [
      { type: 'boolean', column: 'isRootObservation', operator: '=', value: true },
      { type: 'number', column: 'latency', operator: '>', value: 1 },
      { type: 'string', column: 'model', operator: '=', value: 'gpt-4o' },
    ],
  ],
];

const ERRORS: [string, RegExp, number][] = [
  ['nope = 1', /unknown column nope/, 0],
  ['latency > fast', /latency: expected a number/, 10],
  ['latency contains 1', /operator contains is not supported on a number column/, 8],
  ['name = "open', /unterminated string/, 7],
  ['name = a OR name = b', /OR is not supported/, 9],
  ['name = a name = b', /expected AND, found name/, 9],
  ['tags = a', /operator = is not supported on a array column/, 5],
  ['metadata = x', /name the key, as metadata.key/, 11],
  ['name.key = x', /name has no keys/, 0],
  ['startTime > yesterday', /expected a date and time/, 12],
  ['isRootObservation = yes', /expected true or false/, 20],
  ['name =', /expected a value/, 6],
  ['name', /expected an operator/, 4],
  ['name ! x', /"!" must be followed by "="/, 5],
  ['level any of ["a" "b"]', /expected "," or "]"/, 18],
];

describe('filter bar text -> API v2 filters', () => {
  it.each(PARSES)('%s', (text, filters) => {
    const r = parseFilterText(text, COLUMNS);
    expect(r).toEqual({ ok: true, filters });
    // Every parse is a filter the API's own schema accepts.
    expect(filterList.safeParse(filters).success).toBe(true);
  });

  it.each(ERRORS)('%s is refused', (text, message, at) => {
    const r = parseFilterText(text, COLUMNS);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toMatch(message);
      expect(r.at).toBe(at);
    }
  });

  it.each(PARSES.filter(([t]) => t !== ''))(
    'formats %s back to text that parses to the same filters',
    (text) => {
      const first = parseFilterText(text, COLUMNS);
      if (!first.ok) throw new Error(first.error);
      expect(parseFilterText(formatFilters(first.filters), COLUMNS)).toEqual(first);
    },
  );
});
