// GitOps health judged by the tools GitOps uses: the kstatus library (what Flux and cli-utils
// compute) and the chart's Argo CD Lua health check run in gopher-lua (Argo CD's interpreter),
// both against the ObservabilityService objects the planner writes at every step of whole walks:
// InProgress/Progressing while moving, Current/Healthy when Ready, Failed/Degraded when Stalled.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_VERSION, KIND, type ObservabilityService } from '../../operator/api/v1alpha1.ts';
import { CALM } from '../fixtures/operator/fake-cluster.ts';
import { argoHealth, expectedHealth, kstatus } from '../tools/gitops-health.ts';
import { chartDir } from '../tools/paths.ts';
import { play, type Run } from '../unit/operator-walks.ts';

const script = join(chartDir, 'docs', 'argocd-health.lua');

/** The object as a GitOps tool reads it after the operator wrote `status` for its generation. */
function objectsOf(run: Run): ObservabilityService[] {
  const c = play(run);
  return c.statuses.map(({ status }) => ({
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: 'obs', namespace: 'default', uid: 'u', generation: status.observedGeneration ?? 1 },
    spec: c.live.spec,
    status,
  }));
}

const isTrue = (o: ObservabilityService, type: string) =>
  o.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;

const WALKS: Record<string, Run> = {
  'calm upgrade to EventsOnly': {
    seed: 7,
    scenario: 'toEventsOnly',
    automatic: false,
    drop: false,
    replicas: 2,
    chaos: CALM,
    schedule: [],
  },
  'failing Jobs (stalls, retries)': {
    seed: 5,
    scenario: 'viaLegacy',
    automatic: false,
    drop: false,
    replicas: 1,
    chaos: { ...CALM, jobFailure: 0.3 },
    schedule: Array.from({ length: 200 }, (_, i) => (i * 37) % 100),
  },
};

describe('GitOps health of the objects the planner writes', () => {
  it.each(Object.keys(WALKS))('kstatus and the Argo CD check agree with the conditions: %s', async (name) => {
    const objects = objectsOf(WALKS[name]!);
    const seen = new Set<string>();
    for (const [i, o] of objects.entries()) {
      const want = expectedHealth(o);
      const got = { kstatus: (await kstatus(o)).status, argo: (await argoHealth(script, o)).status };
      expect(got, `status #${i}: ${JSON.stringify(o.status?.conditions?.slice(0, 3))}`).toEqual(want);
      seen.add(got.kstatus);
    }
    expect([...seen].sort()).toEqual(
      name.startsWith('failing') ? ['Current', 'Failed', 'InProgress'] : ['Current', 'InProgress'],
    );
  });

  it('a status older than the spec is InProgress/Progressing whatever it says', async () => {
    const ready = objectsOf(WALKS['calm upgrade to EventsOnly']!).at(-1)!;
    expect(isTrue(ready, 'Ready')).toBe(true);
    const stale = { ...ready, metadata: { ...ready.metadata, generation: ready.metadata.generation + 1 } };
    expect((await kstatus(stale)).status).toBe('InProgress');
    expect(await argoHealth(script, stale)).toEqual({
      status: 'Progressing',
      message: `Waiting for the operator to observe generation ${stale.metadata.generation}`,
    });
  });

  it('before the operator wrote any status: Argo CD waits; kstatus cannot know the object has conditions', async () => {
    const { status: _s, ...fresh } = objectsOf(WALKS['calm upgrade to EventsOnly']!).at(-1)!;
    // kstatus treats a custom resource without status as Current (it has nothing to go by); the
    // operator's first status write (observedGeneration, Reconciling=True) turns it InProgress.
    expect((await kstatus(fresh)).status).toBe('Current');
    expect(await argoHealth(script, fresh)).toEqual({
      status: 'Progressing',
      message: 'Waiting for the operator to report status',
    });
  });

  it('messages come from the deciding condition', async () => {
    const objects = objectsOf(WALKS['failing Jobs (stalls, retries)']!);
    const stalled = objects.find((o) => isTrue(o, 'Stalled'))!;
    const stalledMessage = stalled.status!.conditions!.find((c) => c.type === 'Stalled')!.message;
    expect(await argoHealth(script, stalled)).toEqual({ status: 'Degraded', message: stalledMessage });
    expect((await kstatus(stalled)).message).toBe(stalledMessage);
  });
});
