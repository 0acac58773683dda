import { describe, expect, it } from 'vitest';
import {
  createItemRequest,
  createQueueRequest,
  missingConfigIds,
  statusChange,
} from '../../server/features/annotation-queues/rules.ts';

const NOW = new Date('2026-01-02T03:04:05.000Z');

describe('statusChange', () => {
  it.each([
    ['PENDING', undefined, { status: 'PENDING', completedAt: 'keep' }],
    ['COMPLETED', undefined, { status: 'COMPLETED', completedAt: 'keep' }],
    ['PENDING', 'COMPLETED', { status: 'COMPLETED', completedAt: NOW.toISOString() }],
    ['COMPLETED', 'COMPLETED', { status: 'COMPLETED', completedAt: NOW.toISOString() }],
    ['COMPLETED', 'PENDING', { status: 'PENDING', completedAt: null }],
    ['PENDING', 'PENDING', { status: 'PENDING', completedAt: null }],
  ] as const)('%s asked %s', (current, asked, expected) => {
    expect(statusChange(current, asked, NOW)).toEqual(expected);
  });
});

describe('missingConfigIds', () => {
  it.each([
    [['a', 'b'], ['a', 'b'], []],
    [['a', 'b', 'c'], ['b'], ['a', 'c']],
    [['a', 'a'], [], ['a']],
  ])('%j of %j', (asked, found, missing) => {
    expect(missingConfigIds(asked, found)).toEqual(missing);
  });
});

describe('requests', () => {
  it.each([
    [{ name: 'q', scoreConfigIds: ['c'] }, true],
    [{ name: 'q', description: null, scoreConfigIds: ['c'] }, true],
    [{ name: ' ', scoreConfigIds: ['c'] }, false],
    [{ name: 'q', scoreConfigIds: [] }, false],
    [{ name: 'q' }, false],
  ])('queue %j valid: %s', (body, valid) => {
    expect(createQueueRequest.safeParse(body).success).toBe(valid);
  });
  it.each([
    [{ objectId: 'x', objectType: 'TRACE' }, true],
    [{ objectId: 'x', objectType: 'SESSION', status: 'COMPLETED' }, true],
    [{ objectId: 'x', objectType: 'PROMPT' }, false],
    [{ objectId: '', objectType: 'TRACE' }, false],
    [{ objectId: 'x', objectType: 'TRACE', status: 'DONE' }, false],
  ])('item %j valid: %s', (body, valid) => {
    expect(createItemRequest.safeParse(body).success).toBe(valid);
  });
});
