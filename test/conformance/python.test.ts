/**
 * The public Python SDKs from PyPI against the service in each write mode. Each case runs a small
 * script with one version's interpreter (test/conformance/python/), then checks the outcome on
 * the server's read APIs, never trusting the SDK's silence.
 */
import { describe, inject, it } from 'vitest';
import { checkScore, checkTracing, type Tier } from './checks.ts';
import { caseName, MODES, type Mode, runPython } from './env.ts';
import { PYTHON_SDK_VERSIONS, type PythonSdkVersion } from './python-sdks.ts';

const env = inject('conformance');

/** The spec's Limits and Errors tables for the versions under test. */
const TIER: Record<PythonSdkVersion, Tier> = {
  '2.60.10': 'refused',
  '3.14.6': 'older',
  '4.6.1': 'delayed',
  '4.7.1': 'real-time',
  '5.0.4': 'real-time',
};

interface Operation {
  /** The versions that offer it (all when absent). */
  versions?: (v: PythonSdkVersion) => boolean;
  run(version: PythonSdkVersion, mode: Mode, id: string): Promise<void>;
}

const OPERATIONS: Record<string, Operation> = {
  tracing: {
    async run(version, mode, id) {
      const { traceId } = await runPython<{ traceId: string }>(version, 'tracing', env.modes[mode], {
        CONFORMANCE_CASE: id,
      });
      // Version 4 on propagates user and session to every span itself (propagate_attributes).
      const propagatesClientSide = Number(version.split('.')[0]) >= 4;
      await checkTracing(env, mode, TIER[version], traceId, id, {
        name: 'python',
        version,
        propagatesClientSide,
      });
    },
  },
  'score (batch score-create)': {
    versions: (v) => !v.startsWith('5.'),
    async run(version, mode, id) {
      const traceId = `${id}-trace`;
      const out = await runPython<{ name: string }>(version, 'score', env.modes[mode], {
        CONFORMANCE_CASE: id,
        CONFORMANCE_TRACE_ID: traceId,
      });
      await checkScore(env.modes[mode], traceId, out.name, 0.75);
    },
  },
};

describe.concurrent.each(PYTHON_SDK_VERSIONS.map((v) => [v]))('python %s', (version) => {
  for (const mode of MODES) {
    for (const [operation, op] of Object.entries(OPERATIONS)) {
      if (op.versions && !op.versions(version)) continue;
      it(`${operation} in ${mode}`, async () => {
        await op.run(version, mode, caseName('py', version, operation.split(' ')[0]!, mode));
      });
    }
  }
});
