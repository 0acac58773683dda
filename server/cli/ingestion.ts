/**
 * `observatory ingestion replay --from ISO --to ISO [--project ID] [--max-stall-seconds S] [--json]`:
 * writes the ingestion log's files accepted in [from, to) to the analytics store again
 * (server/features/ingestion/log/replay.ts), showing how many are written as it goes; gives up (exit 1) when
 * no file was written for S seconds (600). Idempotent; after a kill or a stall, run it again (or let
 * the workers drain what it queued).
 */

import { processConfig } from '../kernel/config/processes.ts';
import { parseIsoDateTime } from '../kernel/iso-datetime.ts';
import { replayConfiguredLog } from './log-replay.ts';
import { intFlag, parseFlags, UsageError, WINDOW_FLAGS } from './usage.ts';

const USAGE =
  'usage: observatory ingestion replay --from ISO --to ISO [--project ID] [--max-stall-seconds S] [--json]';

function time(value: string | undefined, name: string): number {
  if (!value) throw new UsageError(`--${name} is required\n${USAGE}`);
  const parsed = parseIsoDateTime(value);
  if (parsed === null) throw new UsageError(`--${name} must be an ISO 8601 date-time, got ${value}`);
  return parsed;
}

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    ...WINDOW_FLAGS,
    'max-stall-seconds': { type: 'string' },
  });
  if (positionals.length !== 1 || positionals[0] !== 'replay') throw new UsageError(USAGE);
  const fromMs = time(values.from, 'from');
  const toMs = time(values.to, 'to');
  if (fromMs >= toMs) throw new UsageError('--from must be before --to');
  const stallSeconds = intFlag(values['max-stall-seconds'], 'max-stall-seconds');
  const config = processConfig('ingestion');
  const tty = process.stderr.isTTY;
  const result = await replayConfiguredLog(
    config,
    config.ingestionLog.s3!,
    { fromMs, toMs, projectId: values.project },
    (p) => {
      if (values.json) return;
      const line = `replay: ${p.written}/${p.files} files written${p.dead > 0 ? `, ${p.dead} unreadable` : ''}`;
      process.stderr.write(tty ? `\r${line}` : `${line}\n`);
    },
    stallSeconds === undefined ? undefined : stallSeconds * 1000,
  );
  if (tty && !values.json) process.stderr.write('\n');
  process.stdout.write(
    values.json
      ? `${JSON.stringify(result)}\n`
      : `replayed ${result.written} files from ${new Date(fromMs).toISOString()} to ${new Date(toMs).toISOString()}${values.project ? ` of project ${values.project}` : ''}\n`,
  );
  return result.dead > 0 ? 1 : 0;
}
