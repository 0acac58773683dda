/** Resolves after SIGTERM or SIGINT and the given cleanup ran; a second signal exits at once. */
export function onShutdown(cleanup: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const handler = () => {
      if (stopping) process.exit(1);
      stopping = true;
      cleanup().finally(resolve);
    };
    process.on('SIGTERM', handler);
    process.on('SIGINT', handler);
  });
}
