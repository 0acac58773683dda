import { describe, expect, it } from 'vitest';
import {
  isRealTimeProducer,
  isRefusedInEventsOnly,
  parseSdkVersion,
  refusalReason,
  type SdkTier,
  sdkTier,
} from '../../server/features/ingestion/sdk-versions.ts';

// The spec's Limits and Errors tables, restated as rows: every boundary from both sides.
const PYTHON: [string, SdkTier][] = [
  ['1.0.0', 'refused'],
  ['2.0.0', 'refused'],
  ['2.60.10', 'refused'],
  ['2.99.99', 'refused'],
  ['3.0.0b1', 'older'],
  ['3.0.0-rc.1', 'older'],
  ['3.0.0', 'older'],
  ['3.14.6', 'older'],
  ['3.99.0', 'older'],
  ['4.0.0rc1', 'older'],
  ['4.0.0', 'delayed'],
  ['4.6.1', 'delayed'],
  ['4.6.1.post1', 'delayed'],
  ['4.6.9', 'delayed'],
  ['4.6.99', 'delayed'],
  ['4.7.0.dev3', 'delayed'],
  ['4.7.0a1', 'delayed'],
  ['4.7.0b2', 'delayed'],
  ['4.7.0rc1', 'delayed'],
  ['4.7.0-rc.1', 'delayed'],
  ['4.7.0', 'real-time'],
  ['4.7.1', 'real-time'],
  ['4.8.1rc1', 'real-time'],
  ['4.14.3', 'real-time'],
  ['5.0.0b1', 'real-time'],
  ['5.0.4', 'real-time'],
  ['v4.7.0', 'real-time'],
  [' 4.7.0 ', 'real-time'],
];

const JS: [string, SdkTier][] = [
  ['2.9.0', 'refused'],
  ['3.0.0', 'refused'],
  ['3.38.0', 'refused'],
  ['3.39.2', 'refused'],
  ['3.99.99', 'refused'],
  ['4.0.0-beta.1', 'older'],
  ['4.0.0', 'older'],
  ['4.6.0', 'older'],
  ['4.99.0', 'older'],
  ['5.0.0-alpha.3', 'older'],
  ['5.0.0', 'delayed'],
  ['5.3.0', 'delayed'],
  ['5.3.9', 'delayed'],
  ['5.3.99', 'delayed'],
  ['5.4.0-rc.1', 'delayed'],
  ['5.4.0-beta.0', 'delayed'],
  ['5.4.0', 'real-time'],
  ['5.4.1', 'real-time'],
  ['5.11.1', 'real-time'],
  ['6.0.0-rc.0', 'real-time'],
  ['6.0.0', 'real-time'],
];

describe('SDK tiers by full semantic version', () => {
  it.each(PYTHON)('python %s -> %s', (version, tier) => {
    expect(sdkTier('python', version)).toBe(tier);
    expect(sdkTier('langfuse-python', version)).toBe(tier);
  });
  it.each(JS)('javascript %s -> %s', (version, tier) => {
    for (const name of ['javascript', 'langfuse-js', 'JavaScript', 'typescript']) {
      expect(sdkTier(name, version)).toBe(tier);
    }
  });
  it.each([
    ['python', undefined],
    ['python', ''],
    ['python', 'unknown'],
    ['python', '4'],
    ['python', '4.7.x'],
    ['python', 'latest'],
    ['python', '4.7.0;drop'],
    ['python', '99999999999999999999.0.0'],
    ['javascript', '5.4'],
    ['javascript', '5.4.0.0'],
    ['javascript', `5.4.0-${'x'.repeat(80)}`],
    [undefined, '5.4.0'],
    ['unknown', '4.7.0'],
    ['custom-v4', '9.9.9'],
    ['go', '5.0.0'],
  ])('%s %s is unknown: not real-time, not refused', (name, version) => {
    expect(sdkTier(name, version)).toBe('unknown');
    expect(isRealTimeProducer({ sdkName: name, sdkVersion: version })).toBe(false);
    expect(isRefusedInEventsOnly({ sdkName: name, sdkVersion: version })).toBe(false);
  });
  it('reads a two-part Python version as its .0 release', () => {
    expect(parseSdkVersion('4.7', 'python')).toBe('4.7.0');
    expect(sdkTier('python', '4.6')).toBe('delayed');
  });
});

describe('PEP 440 versions keep their order', () => {
  const ascending = [
    '4.7.0.dev1',
    '4.7.0a1',
    '4.7.0a2',
    '4.7.0b1',
    '4.7.0rc1',
    '4.7.0rc2',
    '4.7.0',
    '4.7.0.post1',
  ];
  it.each(ascending.slice(1).map((v, i) => [ascending[i]!, v]))('%s < %s', async (lower, higher) => {
    const semver = (await import('semver')).default;
    const a = parseSdkVersion(lower, 'python')!;
    const b = parseSdkVersion(higher, 'python')!;
    // A post release stands for its release: equal, never below.
    if (higher.includes('post')) expect(semver.compare(a, b)).toBe(0);
    else expect(semver.lt(a, b)).toBe(true);
  });
});

describe('real-time producers', () => {
  it.each([
    [{ ingestionVersion: 4 }, true],
    [{ ingestionVersion: 5 }, true],
    [{ ingestionVersion: 3 }, false],
    [{ ingestionVersion: 4, sdkName: 'python', sdkVersion: '2.60.10' }, true],
    [{ sdkName: 'python', sdkVersion: '4.7.0' }, true],
    [{ sdkName: 'python', sdkVersion: '4.6.9' }, false],
    [{ sdkName: 'javascript', sdkVersion: '5.4.0' }, true],
    [{ sdkName: 'javascript', sdkVersion: '5.3.9' }, false],
    [{}, false],
  ])('%j -> %s', (producer, realTime) => {
    expect(isRealTimeProducer(producer)).toBe(realTime);
  });
});

describe('refusal in events_only', () => {
  it('names the SDK, its version and the versions to upgrade to', () => {
    const p = { sdkName: 'python', sdkVersion: '2.60.10' };
    expect(isRefusedInEventsOnly(p)).toBe(true);
    expect(refusalReason(p)).toMatch(
      /Python SDK 2\.60\.10 .*events_only.*Python SDK >= 4\.7\.0.*JS\/TS SDK >= 5\.4\.0/,
    );
    expect(refusalReason({ sdkName: 'langfuse-js', sdkVersion: '3.39.2' })).toMatch(/^JS\/TS SDK 3\.39\.2 /);
  });
});
