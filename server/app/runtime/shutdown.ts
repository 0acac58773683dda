/**
 * Graceful shutdown on SIGTERM or SIGINT: `onSignal` runs at once (readiness starts failing, so
 * Kubernetes takes the pod out of its Service), then after `drainMs` the cleanup closes listeners
 * and clients. A second signal exits at once.
 */
export interface ShutdownPlan {
  onSignal?: () => void;
  drainMs?: number;
  cleanup: () => Promise<void>;
}

export function onShutdown(plan: ShutdownPlan): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const handler = () => {
      if (stopping) process.exit(1);
      stopping = true;
      plan.onSignal?.();
      setTimeout(() => void plan.cleanup().finally(resolve), plan.drainMs ?? 0);
    };
    process.on('SIGTERM', handler);
    process.on('SIGINT', handler);
  });
}

const EXIT_SIGNALS = { SIGTERM: 15, SIGINT: 2 } as const;

/**
 * A one-shot command (a Job's) ends at once on SIGTERM or SIGINT, with the shell's code (128 + the
 * signal's number). Said explicitly: as a container's PID 1, Node gets no default action for them,
 * so a stopped Job would go on writing until the kubelet's SIGKILL. Its work is resumable from any
 * point, so ending mid-way loses nothing.
 */
export function exitOnSignal(): void {
  for (const [signal, n] of Object.entries(EXIT_SIGNALS)) process.once(signal, () => process.exit(128 + n));
}
