import { describe, expect, it } from 'vitest';
import {
  createMediaRequest,
  mediaIdOf,
  mediaObjectKey,
  patchMediaRequest,
} from '../../server/features/media/rules.ts';
import { describeIssues } from '../../server/features/write-model/bodies.ts';

// SHA-256 of `abc` and of the empty string, base64: one has `+` and `/`, the other neither.
const ABC = 'ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=';
const EMPTY = '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';

describe('media ids and object keys', () => {
  it.each([
    [ABC, 'ungWv48Bz-pBQUDeXa4iI7'],
    [EMPTY, '47DEQpj8HBSa-_TImW-5JC'],
  ])('the id of %s is the first 22 URL-safe characters', (hash, id) => {
    expect(mediaIdOf(hash)).toBe(id);
  });
  it.each([
    ['media/', 'image/png', 'media/p1/m1.png'],
    ['', 'image/jpeg', 'p1/m1.jpeg'],
    ['x/', 'audio/mpeg', 'x/p1/m1.mp3'],
    ['', 'application/octet-stream', 'p1/m1.bin'],
  ] as const)('prefix %j and %s give %s', (prefix, type, key) => {
    expect(mediaObjectKey(prefix, 'p1', 'm1', type)).toBe(key);
  });
});

describe('the create request', () => {
  const valid = { traceId: 't', contentType: 'image/png', contentLength: 3, sha256Hash: ABC, field: 'input' };
  const problemsOf = (body: object) => {
    const r = createMediaRequest.safeParse(body);
    return r.success ? undefined : describeIssues(r.error);
  };
  it.each([
    ['a trace field', valid],
    ['an observation field', { ...valid, observationId: 'o', field: 'output' }],
    [
      'null optionals (Python sends them)',
      { ...valid, observationId: null, datasetId: null, datasetItemId: null },
    ],
    [
      'a dataset item field',
      { ...valid, traceId: undefined, datasetId: 'd', datasetItemId: 'i', field: 'expectedOutput' },
    ],
  ])('accepts %s', (_, body) => {
    expect(problemsOf(body)).toBeUndefined();
  });
  it.each([
    [
      'an unknown content type',
      { ...valid, contentType: 'image/x-unknown' },
      /^contentType: Invalid content type/,
    ],
    ['a zero length', { ...valid, contentLength: 0 }, /^contentLength: /],
    ['a fractional length', { ...valid, contentLength: 1.5 }, /^contentLength: /],
    [
      'a hex hash',
      { ...valid, sha256Hash: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad' },
      /^sha256Hash: /,
    ],
    [
      'no trace and no dataset item',
      { ...valid, traceId: undefined },
      /^traceId: required unless datasetItemId/,
    ],
    [
      'a dataset item field on a trace',
      { ...valid, field: 'expectedOutput' },
      /^field: Invalid field. Only supporting input, output, metadata/,
    ],
    [
      'a trace field on a dataset item',
      { ...valid, datasetItemId: 'i', field: 'output' },
      /^field: Invalid field. Only supporting input, expectedOutput, metadata/,
    ],
  ])('refuses %s naming the field', (_, body, problem) => {
    expect(problemsOf(body)).toMatch(problem);
  });
});

describe('the patch request', () => {
  it('takes what the SDKs report, the error optional', () => {
    expect(
      patchMediaRequest.safeParse({ uploadedAt: '2026-11-23T10:00:00Z', uploadHttpStatus: 200 }).success,
    ).toBe(true);
    const r = patchMediaRequest.safeParse({ uploadedAt: 'yesterday', uploadHttpStatus: 200 });
    expect(r.success ? '' : describeIssues(r.error)).toMatch(/^uploadedAt: /);
  });
});
