/** How every bench figure is printed: one aligned line per figure, quantiles and ratios alike. */
export const line = (label: string, value: string): void => {
  process.stdout.write(`${label.padEnd(58)} ${value}\n`);
};

export const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

export const ratio = (value: number, baseline: number): string => (value / baseline).toFixed(3);

/** How long `fn` took, in seconds. */
export const seconds = async (fn: () => Promise<unknown>): Promise<number> => {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
};
