/**
 * `observatory backup --id ID [--include analytics,relational] [--termination-log PATH] [--json]`,
 * `observatory restore --id ID [--include ...] [--termination-log PATH] [--json]` and `observatory backup-prune
 * [--keep-last N] [--max-age DURATION] [--protect ID,...] [--termination-log PATH] [--json]`
 * (retention over the bucket's complete backups) and `observatory backup-verify --id ID
 * [--termination-log PATH] [--json]` (a restore into scratch databases, compared with the
 * manifest; exit 0 with any verdict, which the summary carries): the Jobs the operator runs
 * (server/contract/backup.ts). Exit 0 done, 1 refused or failed (one line on stderr saying why,
 * no credential in it), 2 usage or configuration error.
 */
import { writeFile } from 'node:fs/promises';
import {
  BACKUP_CLI,
  BACKUP_ID_PATTERN,
  type RestoreSummary,
  TERMINATION_MESSAGE_PATH,
} from '../contract/backup.ts';
import { parseDuration } from '../contract/duration.ts';
import { backupBucket } from '../features/backup/bucket.ts';
import { checkBackupId, parseInclude, summaryOf } from '../features/backup/plan.ts';
import { pruneBackups } from '../features/backup/prune.ts';
import {
  type BackupContext,
  BackupFailure,
  type RestoreResult,
  restoreBackup,
  takeBackup,
} from '../features/backup/run.ts';
import { verifyBackup } from '../features/backup/verify.ts';
import { verifyText } from '../features/backup/verify-plan.ts';
import { processConfig, toolEnv } from '../kernel/config/processes.ts';
import { createPool } from '../platform/datastores/postgres.ts';
import { replayConfiguredLog } from './log-replay.ts';
import { intFlag, parseFlags, UsageError } from './usage.ts';

const USAGE = {
  backup: `usage: observatory ${BACKUP_CLI.backup} ${BACKUP_CLI.idFlag} ID [${BACKUP_CLI.includeFlag} analytics,relational] [--termination-log PATH] [--json]`,
  restore: `usage: observatory ${BACKUP_CLI.restore} ${BACKUP_CLI.idFlag} ID [${BACKUP_CLI.includeFlag} analytics,relational] [--termination-log PATH] [--json]`,
  'backup-verify': `usage: observatory ${BACKUP_CLI.verify} ${BACKUP_CLI.idFlag} ID [--termination-log PATH] [--json]`,
};

type Role = keyof typeof USAGE;

function parse(role: Role, args: string[]) {
  const { values, positionals } = parseFlags(args, {
    id: { type: 'string' },
    include: { type: 'string' },
    json: { type: 'boolean' },
    'termination-log': { type: 'string' },
  });
  // A verification restores every part the backup has.
  if (positionals.length > 0 || (role === 'backup-verify' && values.include !== undefined))
    throw new UsageError(USAGE[role]);
  const id = checkBackupId(values.id);
  if (typeof id !== 'string') throw new UsageError(`${id.problem}\n${USAGE[role]}`);
  const parts = parseInclude(values.include);
  if ('problem' in parts) throw new UsageError(`${parts.problem}\n${USAGE[role]}`);
  return {
    id,
    parts,
    json: values.json === true,
    terminationLog: values['termination-log'] ?? TERMINATION_MESSAGE_PATH,
  };
}

async function withContext(role: Role, work: (ctx: BackupContext) => Promise<void>): Promise<number> {
  const config = processConfig(role);
  const pool = createPool(config.databaseUrl!);
  const bucket = backupBucket(config.backupStorage!);
  const log = config.ingestionLog.s3;
  const ctx: BackupContext = {
    config,
    destination: config.backupStorage!,
    bucket,
    pool,
    childEnv: toolEnv(),
    say: (line) => process.stderr.write(`${line}\n`),
    // A restore replays the log's writes the backup lacks; a backup only reads its queue.
    log:
      role === 'restore' && log
        ? {
            retentionHours: config.ingestionLog.retentionHours,
            replay: (window, onProgress) => replayConfiguredLog(config, log, window, onProgress),
          }
        : undefined,
  };
  try {
    await work(ctx);
    return 0;
  } catch (err) {
    if (!(err instanceof BackupFailure)) throw err;
    process.stderr.write(`observatory ${role}: ${err.message}\n`);
    return 1;
  } finally {
    bucket.close();
    await pool.end();
  }
}

export async function backup(args: string[]): Promise<number> {
  const { id, parts, json, terminationLog } = parse('backup', args);
  return withContext('backup', async (ctx) => {
    const manifest = await takeBackup(ctx, id, parts);
    const summary = summaryOf(manifest);
    // The operator records this in status; it reads nothing from the bucket. The backup is complete
    // either way (its manifest is written): outside a Pod the path may not exist.
    await writeFile(terminationLog, summary).catch((err: Error) =>
      ctx.say(`backup ${id}: the summary could not be written to ${terminationLog}: ${err.message}`),
    );
    process.stdout.write(
      json
        ? `${summary}\n`
        : `backup ${id} complete: ${manifest.parts.map((p) => `${p.part} ${p.bytes} bytes`).join(', ')}\n`,
    );
  });
}

export async function restore(args: string[]): Promise<number> {
  const { id, parts, json, terminationLog } = parse('restore', args);
  return withContext('restore', async (ctx) => {
    const result = await restoreBackup(ctx, id, parts);
    // The operator records the replay's figures in status.restore; outside a Pod the path may not exist.
    await writeFile(terminationLog, JSON.stringify(restoreSummaryOf(result))).catch((err: Error) =>
      ctx.say(`restore ${id}: the summary could not be written to ${terminationLog}: ${err.message}`),
    );
    process.stdout.write(json ? `${JSON.stringify(result)}\n` : restoredText(result));
  });
}

export async function verify(args: string[]): Promise<number> {
  const { id, json, terminationLog } = parse('backup-verify', args);
  return withContext('backup-verify', async (ctx) => {
    const summary = await verifyBackup(ctx, id);
    const text = JSON.stringify(summary);
    // The operator records the verdict in status; outside a Pod the path may not exist.
    await writeFile(terminationLog, text).catch((err: Error) =>
      ctx.say(`backup-verify ${id}: the summary could not be written to ${terminationLog}: ${err.message}`),
    );
    process.stdout.write(json ? `${text}\n` : `${verifyText(summary)}\n`);
  });
}

function restoreSummaryOf(r: RestoreResult): RestoreSummary {
  if (!r.replay) return { id: r.id };
  const { warnings, ...replay } = r.replay;
  return { id: r.id, replay: { ...replay, warnings: warnings.length } };
}

function restoredText(r: RestoreResult): string {
  const lines = [
    `restored ${r.restored.join(', ')} of backup ${r.id}: taken at release ${r.release} in write mode ${r.writeMode}; return the deployment there`,
  ];
  if (r.replay)
    lines.push(
      `replayed the ingestion log from ${r.replay.from} to ${r.replay.to}: ${r.replay.written} of ${r.replay.files} files written${r.replay.unreadable > 0 ? `, ${r.replay.unreadable} unreadable` : ''}`,
      ...r.replay.warnings.map((w) => `warning: ${w}`),
    );
  return `${lines.join('\n')}\n`;
}

const PRUNE_USAGE = `usage: observatory ${BACKUP_CLI.prune} [${BACKUP_CLI.keepLastFlag} N] [${BACKUP_CLI.maxAgeFlag} DURATION] [${BACKUP_CLI.protectFlag} ID,...] [--termination-log PATH] [--json]`;

function parsePrune(args: string[]) {
  const { values, positionals } = parseFlags(args, {
    'keep-last': { type: 'string' },
    'max-age': { type: 'string' },
    protect: { type: 'string' },
    'termination-log': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (positionals.length > 0) throw new UsageError(PRUNE_USAGE);
  const keepLast = intFlag(values['keep-last'], 'keep-last');
  if (keepLast === 0) throw new UsageError(`--keep-last must be at least 1\n${PRUNE_USAGE}`);
  const maxAge = values['max-age'];
  const maxAgeMs = maxAge === undefined ? undefined : parseDuration(maxAge);
  if (maxAge !== undefined && !maxAgeMs)
    throw new UsageError(`--max-age ${maxAge} is not a duration\n${PRUNE_USAGE}`);
  if (keepLast === undefined && maxAgeMs === undefined)
    throw new UsageError(`name ${BACKUP_CLI.keepLastFlag} and/or ${BACKUP_CLI.maxAgeFlag}\n${PRUNE_USAGE}`);
  const protect = (values.protect ?? '').split(',').filter((id) => id !== '');
  const bad = protect.find((id) => !new RegExp(BACKUP_ID_PATTERN).test(id));
  if (bad) throw new UsageError(`--protect ${bad} is not a backup id\n${PRUNE_USAGE}`);
  return {
    rule: { ...(keepLast !== undefined ? { keepLast } : {}), ...(maxAgeMs ? { maxAgeMs } : {}) },
    protect: new Set(protect),
    json: values.json === true,
    terminationLog: values['termination-log'] ?? TERMINATION_MESSAGE_PATH,
  };
}

export async function prune(args: string[]): Promise<number> {
  const { rule, protect, json, terminationLog } = parsePrune(args);
  const config = processConfig('backup-prune');
  const destination = config.backupStorage!;
  const bucket = backupBucket(destination);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  try {
    const summary = await pruneBackups(bucket, {
      prefix: destination.prefix,
      rule,
      protect,
      now: new Date(),
      say,
    });
    const text = JSON.stringify(summary);
    await writeFile(terminationLog, text).catch((err: Error) =>
      say(`backup-prune: the summary could not be written to ${terminationLog}: ${err.message}`),
    );
    process.stdout.write(
      json ? `${text}\n` : `kept ${summary.kept} backups, deleted ${summary.deletedCount}\n`,
    );
    return 0;
  } finally {
    bucket.close();
  }
}
