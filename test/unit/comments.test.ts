/** Table tests of comment requests and of where a comment is shown (a trace on its root). */
import { describe, expect, it } from 'vitest';
import {
  createCommentRequest,
  shownTargets,
  traceOfVirtualRoot,
} from '../../server/features/comments/rules.ts';

describe('comments', () => {
  it.each([
    ['trace', 'TRACE'],
    ['Observation', 'OBSERVATION'],
    ['SESSION', 'SESSION'],
    ['prompt', 'PROMPT'],
  ])('object type %s is %s', (given, stored) => {
    const r = createCommentRequest.parse({ objectType: given, objectId: 'x', content: 'c' });
    expect(r.objectType).toBe(stored);
  });
  it.each([
    [{ objectType: 'DATASET', objectId: 'x', content: 'c' }, 'objectType'],
    [{ objectType: 'TRACE', objectId: '', content: 'c' }, 'objectId'],
    [{ objectType: 'TRACE', objectId: 'x', content: '' }, 'content'],
    [{ objectType: 'TRACE', objectId: 'x', content: 'c'.repeat(5001) }, 'content'],
  ])('%j is refused on %s', (body, field) => {
    expect(createCommentRequest.safeParse(body).error?.issues[0]?.path[0]).toBe(field);
  });
  it.each([
    ['t-abc', 'abc'],
    ['t-', undefined],
    ['abc', undefined],
  ])('virtual root %s belongs to trace %s', (id, trace) => {
    expect(traceOfVirtualRoot(id)).toBe(trace);
  });
  it.each([
    [
      { objectType: 'OBSERVATION', objectId: 'root' },
      'tr',
      [
        { objectType: 'OBSERVATION', objectId: 'root' },
        { objectType: 'TRACE', objectId: 'tr' },
      ],
    ],
    [
      { objectType: 'OBSERVATION', objectId: 'child' },
      undefined,
      [{ objectType: 'OBSERVATION', objectId: 'child' }],
    ],
    [{ objectType: 'TRACE', objectId: 'tr' }, 'ignored', [{ objectType: 'TRACE', objectId: 'tr' }]],
  ] as const)('a list for %j (root of %s) shows %j', (asked, root, shown) => {
    expect(shownTargets(asked, root)).toEqual(shown);
  });
});
