/**
 * The public Python SDKs from PyPI against the service in each write mode. Each case runs a small
 * script with one version's interpreter (test/conformance/python/), then checks the outcome on
 * the server's read APIs, never trusting the SDK's silence.
 */
import { describe, expect, inject, it } from 'vitest';
import {
  checkComment,
  checkDataset,
  checkPrompts,
  checkQueueItems,
  checkScore,
  checkScoreConfig,
  checkTracing,
  type Tier,
} from './checks.ts';
import { api, caseName, MODES, type Mode, otlpTrace, runPython, shortName } from './env.ts';
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

async function scoreCase(version: PythonSdkVersion, mode: Mode, id: string) {
  const traceId = `${id}-trace`;
  const out = await runPython<{ name: string }>(version, 'score', env.modes[mode], {
    CONFORMANCE_CASE: id,
    CONFORMANCE_TRACE_ID: traceId,
  });
  await checkScore(env.modes[mode], traceId, out.name, 0.75);
}

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
      await scoreCase(version, mode, id);
    },
  },
  'score (POST /api/public/scores)': {
    versions: (v) => v.startsWith('5.'),
    async run(version, mode, id) {
      await scoreCase(version, mode, id);
    },
  },
  auth_check: {
    async run(version, mode) {
      const out = await runPython<{ ok: boolean }>(version, 'auth', env.modes[mode]);
      expect(out.ok).toBe(true);
    },
  },
  datasets: {
    async run(version, mode, id) {
      const out = await runPython<{ name: string; itemIds: string[] }>(version, 'datasets', env.modes[mode], {
        CONFORMANCE_CASE: id,
      });
      const itemIds = [`${id}-item-1`, `${id}-item-2`];
      expect(out.itemIds).toEqual(itemIds);
      await checkDataset(env.modes[mode], out.name, itemIds);
    },
  },
  prompts: {
    async run(version, mode, id) {
      const out = await runPython<PromptsResult>(version, 'prompts', env.modes[mode], {
        CONFORMANCE_CASE: id,
      });
      expect(out.production).toEqual({ version: 1, compiled: 'Hello Ada', config: { temperature: 0.1 } });
      expect(out.v2).toEqual({ version: 2, compiled: 'Hi Ada' });
      expect(out.staging).toEqual({ version: 2 });
      expect(out.chat.messages).toEqual([
        { role: 'system', content: 'You are a tester' },
        { role: 'user', content: '2+2?' },
      ]);
      await checkPrompts(env.modes[mode], out.text, out.chat.name);
    },
  },
  comments: {
    async run(version, mode, id) {
      const traceId = await otlpTrace(env.modes[mode], `${id}-commented`);
      const out = await runPython<{ listed: string[] }>(version, 'comments', env.modes[mode], {
        CONFORMANCE_CASE: id,
        CONFORMANCE_TRACE_ID: traceId,
      });
      expect(out.listed).toEqual([`${id} comment`]);
      await checkComment(env.modes[mode], traceId, `${id} comment`);
    },
  },
  'score configs': {
    async run(version, mode, id) {
      const traceId = await otlpTrace(env.modes[mode], `${id}-scored`);
      const name = shortName('cfg');
      const out = await runPython<{ id: string; name: string }>(version, 'score_configs', env.modes[mode], {
        CONFORMANCE_CONFIG_NAME: name,
        CONFORMANCE_TRACE_ID: traceId,
      });
      expect(out.name).toBe(name);
      await checkScoreConfig(env.modes[mode], out.id, name);
      await checkScore(env.modes[mode], traceId, name, 0.5);
    },
  },
  'annotation queues': {
    // The SDK version whose generated client is checked here to carry `annotation_queues`.
    versions: (v) => v.startsWith('5.'),
    async run(version, mode, id) {
      const configId = (
        await api<{ id: string }>(env.modes[mode], 'POST', '/api/public/score-configs', {
          name: shortName('queue'),
          dataType: 'NUMERIC',
        })
      ).body.id;
      const traceId = `${id}-queued`;
      const out = await runPython<QueueResult>(version, 'annotation_queues', env.modes[mode], {
        CONFORMANCE_CONFIG_ID: configId,
        CONFORMANCE_TRACE_ID: traceId,
        CONFORMANCE_QUEUE_NAME: `${id} queue`,
      });
      expect(out).toMatchObject({
        completedAt: true,
        deleted: true,
        listed: [[traceId, 'TRACE', 'COMPLETED']],
        total: 1,
      });
      await checkQueueItems(env.modes[mode], out.queueId, out.itemId, traceId);
    },
  },
};

interface QueueResult {
  queueId: string;
  itemId: string;
  completedAt: boolean;
  deleted: boolean;
  listed: [string, string, string][];
  total: number;
}

interface PromptsResult {
  text: string;
  production: unknown;
  v2: unknown;
  staging: unknown;
  chat: { name: string; messages: unknown };
}

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
