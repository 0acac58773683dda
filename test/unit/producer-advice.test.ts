/** The migration page's advice per producer, and the retry commands from the contract. */
import { describe, expect, it } from 'vitest';
import { annotateCommand, backfillRetryCommand } from '../../server/contract/retries.ts';
import { upgradeAdvice } from '../../server/features/producers/advice.ts';

describe('upgradeAdvice', () => {
  const cases: [string, string, 'ingestion-api' | 'legacy-endpoint' | 'otel-dual-path', RegExp[]][] = [
    [
      'python',
      '2.60.3',
      'ingestion-api',
      [/python@2\.60\.3/, /rejects this SDK version/, /upgrade to Python SDK >= 4\.7\.0, which sends/],
    ],
    ['python', '3.1.0', 'ingestion-api', [/keeps only scores\): upgrade to Python SDK >= 4\.7\.0/]],
    ['javascript', '3.38.0', 'ingestion-api', [/rejects this SDK version/, /JS\/TS SDK >= 5\.4\.0/]],
    ['langfuse-js', '5.1.0', 'otel-dual-path', [/without client-side propagation/, /JS\/TS SDK >= 5\.4\.0,/]],
    [
      'opentelemetry',
      '1.30.0',
      'otel-dual-path',
      [/Python SDK >= 4\.7\.0 or JS\/TS SDK >= 5\.4\.0/, /ingestion-version: 4/],
    ],
    ['javascript', '5.11.1', 'ingestion-api', [/already traces through OpenTelemetry/, /move those calls/]],
    ['python', '4.2.0', 'legacy-endpoint', [/answer 404 in events_only/, /Python SDK >= 4\.7\.0 and read/]],
  ];
  for (const [sdkName, sdkVersion, path, want] of cases) {
    it(`${sdkName}@${sdkVersion} via ${path}`, () => {
      const text = upgradeAdvice({ sdkName, sdkVersion, path });
      for (const w of want) expect(text).toMatch(w);
    });
  }

  it('does not call a refused version out when the version is accepted', () => {
    expect(upgradeAdvice({ sdkName: 'python', sdkVersion: '3.1.0', path: 'ingestion-api' })).not.toMatch(
      /outright/,
    );
  });
});

describe('retry commands', () => {
  it('names the CLI command and the kubectl annotation', () => {
    expect(backfillRetryCommand(3)).toBe('observatory backfill retry --step 3');
    expect(annotateCommand('demo', 'observatory.dev/retry-backfill', '3.2')).toBe(
      'kubectl annotate obsvc/demo observatory.dev/retry-backfill=3.2 --overwrite',
    );
  });
});
