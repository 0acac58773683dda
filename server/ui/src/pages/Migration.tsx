/**
 * The background migrations page (owners): the write mode and the five historic backfill steps as
 * the worker or `observatory backfill` records them, refreshed every few seconds while it runs.
 * Read-only: a failed step names the command that retries it.
 */
import { useEffect, useState } from 'react';
import { api, type MigrationInfo } from '../api.ts';
import { formatTime } from '../format.ts';

const REFRESH_MS = 5000;

export function Migration() {
  const [info, setInfo] = useState<MigrationInfo | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    let stopped = false;
    const tick = () =>
      api.migration().then(
        (m) => {
          if (!stopped) setInfo(m);
        },
        (e: Error) => {
          if (!stopped) setError(e.message);
        },
      );
    void tick();
    const timer = setInterval(tick, REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);

  if (error) return <main className="error">{error}</main>;
  if (!info) return <main className="muted">Loading…</main>;
  return (
    <main>
      <h1>Background migrations</h1>
      <p>
        Release {info.release} · write mode {info.writeMode} · preview opt-in{' '}
        {info.allowPreviewOptIn ? 'allowed' : 'off'} ·{' '}
        {info.backfillMayRun
          ? 'the historic backfill may run'
          : 'the historic backfill does not run in this mode'}
      </p>
      <table className="grid">
        <thead>
          <tr>
            <th>Step</th>
            <th>Name</th>
            <th>State</th>
            <th>Chunks</th>
            <th>Finished</th>
            <th>Failure</th>
          </tr>
        </thead>
        <tbody>
          {info.steps.map((s) => (
            <tr key={s.step}>
              <td>{s.step}</td>
              <td>{s.name}</td>
              <td>
                {s.status}
                {s.lockedBy ? ` (by ${s.lockedBy})` : ''}
              </td>
              <td>
                {s.chunksDone}/{s.chunksTotal}
              </td>
              <td>{formatTime(s.finishedAt)}</td>
              <td>
                {s.failedReason && (
                  <>
                    {formatTime(s.failedAt)}: {s.failedReason}
                    {s.retryCommand && (
                      <>
                        {' '}
                        · retry with <code>{s.retryCommand}</code>
                      </>
                    )}
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}
