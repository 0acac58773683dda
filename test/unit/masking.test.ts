/**
 * Masking, pure: each built-in detector on texts it must and must not change (checksums keep ids
 * and timestamps), custom RE2 patterns, stored JSON texts that stay valid JSON whatever their
 * escapes, a whole accepted write, the dry run, and the rule requests' refusals.
 */
import { describe, expect, it } from 'vitest';
import type { IngestionWrite } from '../../server/features/ingestion/write.ts';
import { ibanValid, luhnValid } from '../../server/features/masking/detectors.ts';
import { maskWrite } from '../../server/features/masking/mask-write.ts';
import { compileMasker, type MaskingRuleSpec } from '../../server/features/masking/masker.ts';
import { previewRows } from '../../server/features/masking/preview.ts';
import { createMaskingRuleRequest, updateMaskingRuleRequest } from '../../server/features/masking/rules.ts';
import { LegacyChanges } from '../../server/features/write-model/changes.ts';

const only = (detector: MaskingRuleSpec['detector'], more: Partial<MaskingRuleSpec> = {}) =>
  compileMasker([{ detector, ...more }])!;

describe('built-in detectors', () => {
  it.each([
    ['email', 'write to jane.doe+x@mail.example.org today', 'write to [REDACTED EMAIL] today'],
    ['email', 'no address here: user at example dot com', 'no address here: user at example dot com'],
    ['card_number', 'card 4111 1111 1111 1111 exp', 'card [REDACTED CARD NUMBER] exp'],
    ['card_number', 'card 4111-1111-1111-1111', 'card [REDACTED CARD NUMBER]'],
    ['card_number', 'visa 4012888888881881.', 'visa [REDACTED CARD NUMBER].'],
    // Fails Luhn: an order number or a timestamp in milliseconds stays.
    ['card_number', 'order 4111 1111 1111 1112', 'order 4111 1111 1111 1112'],
    ['card_number', 'at 1733472000123 ms', 'at 1733472000123 ms'],
    ['api_key', 'key sk-proj-abcdefghijklmnopqrstuvwx12', 'key [REDACTED SECRET]'],
    ['api_key', 'pk-lf-1234abcd-5678 and sk-lf-abcdef12-3456', '[REDACTED SECRET] and [REDACTED SECRET]'],
    ['api_key', 'aws AKIAIOSFODNN7EXAMPLE id', 'aws [REDACTED SECRET] id'],
    ['api_key', 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB', '[REDACTED SECRET]'],
    ['api_key', 'Authorization: Bearer abcdef0123456789abcdef', 'Authorization: [REDACTED SECRET]'],
    [
      'api_key',
      'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      'jwt [REDACTED SECRET]',
    ],
    ['api_key', 'the task-list is long', 'the task-list is long'],
    ['iban', 'pay DE89 3704 0044 0532 0130 00 now', 'pay [REDACTED IBAN] now'],
    ['iban', 'pay GB82WEST12345698765432', 'pay [REDACTED IBAN]'],
    // A wrong check digit: not an IBAN.
    ['iban', 'ref DE88 3704 0044 0532 0130 00', 'ref DE88 3704 0044 0532 0130 00'],
    [
      'phone_number',
      'call +1 415 555 2671 or (030) 1234-5678',
      'call [REDACTED PHONE NUMBER] or [REDACTED PHONE NUMBER]',
    ],
    ['phone_number', 'call 415-555-2671', 'call [REDACTED PHONE NUMBER]'],
    ['phone_number', 'version 1.2.3 on 2026-12-06', 'version 1.2.3 on 2026-12-06'],
  ] as const)('%s: %s', (detector, text, masked) => {
    expect(only(detector).text(text)).toBe(masked);
  });

  it('checks card numbers with Luhn and IBANs with mod 97', () => {
    expect([luhnValid('4111111111111111'), luhnValid('4111111111111112'), luhnValid('411')]).toEqual([
      true,
      false,
      false,
    ]);
    expect([ibanValid('DE89370400440532013000'), ibanValid('DE88370400440532013000')]).toEqual([true, false]);
  });

  it('takes a rule replacement over the detector one', () => {
    expect(only('email', { replacement: '<email>' }).text('a@b.io')).toBe('<email>');
  });
});

describe('custom RE2 patterns', () => {
  it('replaces every match with the literal replacement', () => {
    const m = only('custom', { pattern: String.raw`ACME-\d{6}`, replacement: '$1 [id]' });
    expect(m.text('ACME-123456 and ACME-654321, not ACME-12')).toBe('$1 [id] and $1 [id], not ACME-12');
  });
  it('defaults to [REDACTED]', () => {
    expect(only('custom', { pattern: 'secret' }).text('a secret b')).toBe('a [REDACTED] b');
  });
  it('runs after the built-ins, in rule order', () => {
    const m = compileMasker([{ detector: 'email' }, { detector: 'custom', pattern: 'REDACTED EMAIL' }])!;
    expect(m.text('x@y.io')).toBe('[[REDACTED]]');
  });
  it('compiles nothing for no rules', () => {
    expect(compileMasker([])).toBeUndefined();
  });
});

describe('stored JSON texts', () => {
  const m = compileMasker([{ detector: 'email' }, { detector: 'card_number' }])!;
  it.each([
    ['{"to":"jane@example.org","n":1}', '{"to":"[REDACTED EMAIL]","n":1}'],
    // Escapes hide nothing: a newline before the number, a unicode escape inside the address.
    ['{"a":"line\\n4111111111111111"}', '{"a":"line\\n[REDACTED CARD NUMBER]"}'],
    ['"jane\\u0040example.org"', '"[REDACTED EMAIL]"'],
    ['["x", {"deep": ["jane@example.org"]}]', '["x",{"deep":["[REDACTED EMAIL]"]}]'],
    // Plain text that is not JSON is masked as text.
    ['mail jane@example.org now', 'mail [REDACTED EMAIL] now'],
    // Nothing to mask: the very same text, not a re-serialization.
    ['{ "spaced" : "kept as is" }', '{ "spaced" : "kept as is" }'],
    ['{"k":"line\\nbreak"}', '{"k":"line\\nbreak"}'],
  ])('%s', (text, masked) => {
    const out = m.jsonText(text);
    expect(out).toBe(masked);
    if (text.startsWith('{') || text.startsWith('[') || text.startsWith('"'))
      expect(() => JSON.parse(out)).not.toThrow();
  });
  it('keeps keys and non-string values', () => {
    expect(m.value({ 'jane@example.org': 1, list: [true, null, 'a@b.io'] })).toEqual({
      'jane@example.org': 1,
      list: [true, null, '[REDACTED EMAIL]'],
    });
  });
  it('custom patterns see the parsed strings, never the JSON punctuation', () => {
    const quote = only('custom', { pattern: '^secret$' });
    expect(quote.jsonText('{"a":"secret","b":"no secret"}')).toBe('{"a":"[REDACTED]","b":"no secret"}');
  });
});

describe('a whole accepted write', () => {
  const m = compileMasker([{ detector: 'email' }])!;
  const changes = new LegacyChanges();
  changes.addTrace(
    't1',
    { id: 't1', name: 'a@b.io', input: { q: 'mail a@b.io' }, metadata: { who: 'a@b.io' } },
    'x',
  );
  const write: IngestionWrite = {
    projectId: 'p',
    receivedAt: 1,
    attribution: { apiKey: 'pk', sdkName: 's', sdkVersion: '1' },
    targets: { legacy: true, staging: false, events: true },
    virtualRoots: false,
    changes,
    scores: [{ id: 's1', comment: 'by a@b.io', metadata: { m: '"a@b.io"' } }],
    events: [
      {
        span_id: 'o1',
        input: '{"q":"a@b.io"}',
        output: 'plain a@b.io',
        metadata_names: ['k'],
        metadata_values: ['a@b.io'],
        tool_calls: ['{"args":"a@b.io"}'],
        tool_definitions: { f: '{"d":"a@b.io"}' },
      },
    ],
  };
  it('masks inputs, outputs, metadata, tool calls and score comments, and leaves the write itself alone', () => {
    const before = structuredClone({ ...write, changes: [...write.changes.traces] });
    const out = maskWrite(m, write);
    expect(out.changes.traces.get('t1')![0]!.patch).toEqual({
      id: 't1',
      name: 'a@b.io',
      input: { q: 'mail [REDACTED EMAIL]' },
      metadata: { who: '[REDACTED EMAIL]' },
    });
    expect(out.scores).toEqual([
      { id: 's1', comment: 'by [REDACTED EMAIL]', metadata: { m: '"[REDACTED EMAIL]"' } },
    ]);
    expect(out.events).toEqual([
      {
        span_id: 'o1',
        input: '{"q":"[REDACTED EMAIL]"}',
        output: 'plain [REDACTED EMAIL]',
        metadata_names: ['k'],
        metadata_values: ['[REDACTED EMAIL]'],
        tool_calls: ['{"args":"[REDACTED EMAIL]"}'],
        tool_definitions: { f: '{"d":"[REDACTED EMAIL]"}' },
      },
    ]);
    expect({ ...write, changes: [...write.changes.traces] }).toEqual(before);
  });
});

describe('the dry run', () => {
  it('lists only the observations and fields a rule would change, masked', () => {
    const m = compileMasker([{ detector: 'email' }])!;
    const rows = [
      {
        id: 'o1',
        trace_id: 't',
        input: '"a@b.io"',
        output: 'ok',
        metadata_names: ['k', 'j'],
        metadata_values: ['x', 'c@d.io'],
      },
      { id: 'o2', trace_id: 't', input: null, output: null, metadata_names: [], metadata_values: [] },
    ];
    expect(previewRows(m, rows)).toEqual([
      {
        id: 'o1',
        traceId: 't',
        masked: { input: '"[REDACTED EMAIL]"', metadata: { j: '[REDACTED EMAIL]' } },
      },
    ]);
  });
});

describe('rule requests', () => {
  const issue = (r: ReturnType<typeof createMaskingRuleRequest.safeParse>) =>
    r.success ? 'ok' : `${r.error.issues[0]!.path.join('.')}: ${r.error.issues[0]!.message}`;
  it.each([
    [{ name: 'mail', detector: 'email' }, 'ok'],
    [{ name: 'ids', detector: 'custom', pattern: 'ACME-\\d+' }, 'ok'],
    [
      { name: 'ids', detector: 'custom' },
      'pattern: pattern is required for a custom rule and not allowed for a built-in detector',
    ],
    [
      { name: 'mail', detector: 'email', pattern: 'x' },
      'pattern: pattern is required for a custom rule and not allowed for a built-in detector',
    ],
    [
      { name: 'bad', detector: 'custom', pattern: '(a' },
      expect.stringMatching(/^pattern: pattern is not a valid RE2/),
    ],
    [
      { name: 'look', detector: 'custom', pattern: '(?=a)b' },
      expect.stringMatching(/^pattern: pattern is not a valid RE2/),
    ],
    [{ name: 'empty', detector: 'custom', pattern: 'a*' }, 'pattern: pattern matches the empty text'],
    [
      { name: 'q', detector: 'email', replacement: 'a"b' },
      'replacement: must not contain quotes, backslashes or control characters',
    ],
    [{ name: 'q', detector: 'phone' }, expect.stringMatching(/^detector: /)],
    [{ name: '', detector: 'email' }, expect.stringMatching(/^name: /)],
  ])('%j', (body, expected) => {
    expect(issue(createMaskingRuleRequest.safeParse(body))).toEqual(expected);
  });
  it('updates only what is sent', () => {
    expect(updateMaskingRuleRequest.parse({ enabled: false })).toEqual({ enabled: false });
    expect(updateMaskingRuleRequest.safeParse({ detector: 'email' }).success).toBe(false);
  });
});
