// Two operator replicas through the walk on kind, with the leader killed at random moments, as the
// real-node walk does (test/e2e/operator-fleet.ts): the walk must reach EventsOnly all the same.
// The leader is the Pod whose name begins the holder identity of the operator's Lease; it is
// deleted at once (grace period 0), so its successor takes over only when the lease expires.
import type { Log } from '../../cluster/steps.ts';

type Kubectl = (args: string[]) => { code: number; stdout: string; stderr: string };

interface LeaderKill {
  pod: string;
  atSeconds: number;
}

interface Named {
  metadata: { name: string; deletionTimestamp?: string };
  spec?: { holderIdentity?: string };
}

export function leaderChaos(kubectl: Kubectl, namespace: string, log: Log, minMs = 20_000, maxMs = 45_000) {
  const kills: LeaderKill[] = [];
  const started = Date.now();
  let stopped = false;
  let wake = () => {};
  // A pause that stop() cuts short, so the run does not wait out the last one.
  const nap = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const items = (args: string[]): Named[] => {
    const r = kubectl([...args, '-n', namespace, '-o', 'json']);
    return r.code === 0 ? (JSON.parse(r.stdout) as { items: Named[] }).items : [];
  };
  const loop = (async () => {
    while (!stopped) {
      await nap(minMs + Math.floor(Math.random() * (maxMs - minMs)));
      if (stopped) return;
      const holders = items(['get', 'lease']).map((l) => l.spec?.holderIdentity ?? '');
      const leader = items(['get', 'pods', '-l', 'app.kubernetes.io/component=operator']).find(
        (p) =>
          !p.metadata.deletionTimestamp && holders.some((h) => h !== '' && h.startsWith(p.metadata.name)),
      );
      if (!leader) continue;
      const name = leader.metadata.name;
      if (
        kubectl(['delete', 'pod', name, '-n', namespace, '--grace-period=0', '--force', '--wait=false'])
          .code === 0
      ) {
        const atSeconds = Math.round((Date.now() - started) / 1000);
        kills.push({ pod: name, atSeconds });
        log(`killed the operator leader ${name} at ${atSeconds}s`);
      }
    }
  })();
  return {
    async stop(): Promise<LeaderKill[]> {
      stopped = true;
      wake();
      await loop;
      return kills;
    },
  };
}
