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
