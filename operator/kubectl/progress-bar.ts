/** A fixed-width text progress bar: `[########------------]`. Pure. */
export function progressBar(done: number, total: number, width = 20): string {
  const ratio = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
  // Floor, so a bar is full only when everything is done.
  const filled = Math.floor(ratio * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}
