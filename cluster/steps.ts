// How a cold build shows itself: each build is a step with a start line, a heartbeat with the
// elapsed time while it runs (a cold Go build takes minutes) and an end line with its duration;
// a cached step prints one line.
export type Log = (line: string) => void;

export interface StepReporter {
  cached(label: string, detail: string): void;
  run<T>(label: string, fn: (progress: Log) => Promise<T>): Promise<T>;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

export function stepReporter(log: Log, heartbeatMs = 10_000): StepReporter {
  return {
    cached(label, detail) {
      log(`✓ ${label} (cached${detail ? `, ${detail}` : ''})`);
    },
    async run(label, fn) {
      const started = performance.now();
      log(`▸ ${label}...`);
      const timer = setInterval(
        () => log(`  ${label}: ${seconds(performance.now() - started)}`),
        heartbeatMs,
      );
      timer.unref();
      try {
        const result = await fn((line) => log(`  ${line}`));
        log(`✓ ${label} in ${seconds(performance.now() - started)}`);
        return result;
      } catch (error) {
        log(`✗ ${label} failed after ${seconds(performance.now() - started)}`);
        throw error;
      } finally {
        clearInterval(timer);
      }
    },
  };
}
