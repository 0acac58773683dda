// Pod status from the state of its containers, by the kubelet's rules for phase and conditions.
import type { V1ContainerStatus, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import type { ContainerRunner, RestartPolicy } from './container.ts';

export interface PodSnapshot {
  podIP: string | undefined;
  hostIP: string;
  startTime: Date;
  restartPolicy: RestartPolicy;
  initialized: boolean;
  /** Set when an init container failed for good or the active deadline passed. */
  failure?: { reason: string; message: string };
  init: Array<{ runner: ContainerRunner; image: string }>;
  containers: Array<{ runner: ContainerRunner; image: string }>;
}

type Phase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

export function podPhase(s: PodSnapshot): Phase {
  if (s.failure) return 'Failed';
  if (!s.initialized) return 'Pending';
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const { runner } of s.containers) {
    if (runner.state.running) running++;
    else if (runner.state.terminated) {
      stopped++;
      if (runner.state.terminated.exitCode === 0) succeeded++;
    } else if (runner.lastState.terminated)
      stopped++; // in backoff between two runs
    else waiting++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped === 0) return 'Pending';
  if (s.restartPolicy === 'Always') return 'Running';
  if (stopped === succeeded) return 'Succeeded';
  if (s.restartPolicy === 'OnFailure') return 'Running';
  return 'Failed';
}

function containerStatus(runner: ContainerRunner, image: string): V1ContainerStatus {
  const status: V1ContainerStatus = {
    name: runner.spec.name,
    image,
    imageID: `local://${image}`,
    ready: runner.ready,
    started: runner.started && runner.state.running !== undefined,
    restartCount: runner.restartCount,
    state: runner.state,
  };
  if (runner.pid !== undefined) status.containerID = `local://${runner.pid}`;
  if (runner.lastState.terminated) status.lastState = runner.lastState;
  return status;
}

/** Keeps each condition's lastTransitionTime across reports: it changes only when the status does. */
export class ConditionClock {
  private readonly seen = new Map<string, { status: string; time: Date }>();

  condition(type: string, ok: boolean, reason?: string): V1PodCondition {
    const status = ok ? 'True' : 'False';
    const previous = this.seen.get(type);
    const time = previous && previous.status === status ? previous.time : new Date();
    this.seen.set(type, { status, time });
    const condition: V1PodCondition = { type, status, lastTransitionTime: time };
    if (!ok && reason) condition.reason = reason;
    return condition;
  }
}

export function podStatus(s: PodSnapshot, clock: ConditionClock): V1PodStatus {
  const phase = podPhase(s);
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  const allReady = s.containers.every(({ runner }) => runner.ready);
  const notReadyReason = terminal ? 'PodCompleted' : 'ContainersNotReady';
  const status: V1PodStatus = {
    phase,
    hostIP: s.hostIP,
    hostIPs: [{ ip: s.hostIP }],
    startTime: s.startTime,
    conditions: [
      clock.condition('PodReadyToStartContainers', s.podIP !== undefined && !terminal),
      clock.condition('Initialized', s.initialized, 'ContainersNotInitialized'),
      clock.condition('ContainersReady', s.initialized && allReady && !terminal, notReadyReason),
      clock.condition('Ready', s.initialized && allReady && !terminal, notReadyReason),
    ],
    containerStatuses: s.containers.map(({ runner, image }) => containerStatus(runner, image)),
  };
  if (s.init.length)
    status.initContainerStatuses = s.init.map(({ runner, image }) => containerStatus(runner, image));
  if (s.podIP) {
    status.podIP = s.podIP;
    status.podIPs = [{ ip: s.podIP }];
  }
  if (s.failure) {
    status.reason = s.failure.reason;
    status.message = s.failure.message;
  }
  return status;
}
