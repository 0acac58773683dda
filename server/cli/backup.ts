/**
 * `observatory backup --id ID [--include analytics,relational] [--termination-log PATH] [--json]`
 * and `observatory restore --id ID [--include ...] [--json]`: the Jobs the operator runs
 * (server/contract/backup.ts). Exit 0 done, 1 refused or failed (one line on stderr saying why,
 * no credential in it), 2 usage or configuration error.
 */
import { writeFile } from 'node:fs/promises';
import { backupBucket } from '../backup/bucket.ts';
import { checkBackupId, parseInclude, summaryOf } from '../backup/plan.ts';
import { type BackupContext, BackupFailure, restoreBackup, takeBackup } from '../backup/run.ts';
import { processConfig, toolEnv } from '../config/env.ts';
import { BACKUP_CLI, TERMINATION_MESSAGE_PATH } from '../contract/backup.ts';
import { createPool } from '../datastores/postgres.ts';
import { parseFlags, UsageError } from './usage.ts';

const USAGE = {
  backup: `usage: observatory ${BACKUP_CLI.backup} ${BACKUP_CLI.idFlag} ID [${BACKUP_CLI.includeFlag} analytics,relational] [--termination-log PATH] [--json]`,
  restore: `usage: observatory ${BACKUP_CLI.restore} ${BACKUP_CLI.idFlag} ID [${BACKUP_CLI.includeFlag} analytics,relational] [--json]`,
};

type Role = keyof typeof USAGE;

function parse(role: Role, args: string[]) {
  const { values, positionals } = parseFlags(args, {
    id: { type: 'string' },
    include: { type: 'string' },
    json: { type: 'boolean' },
    ...(role === 'backup' ? { 'termination-log': { type: 'string' as const } } : {}),
  });
  if (positionals.length > 0) throw new UsageError(USAGE[role]);
  const id = checkBackupId(values.id);
  if (typeof id !== 'string') throw new UsageError(`${id.problem}\n${USAGE[role]}`);
  const parts = parseInclude(values.include);
  if ('problem' in parts) throw new UsageError(`${parts.problem}\n${USAGE[role]}`);
  const terminationLog = (values as { 'termination-log'?: string })['termination-log'];
  return {
    id,
    parts,
    json: values.json === true,
    terminationLog: terminationLog ?? TERMINATION_MESSAGE_PATH,
  };
}

async function withContext(role: Role, work: (ctx: BackupContext) => Promise<void>): Promise<number> {
  const config = processConfig(role);
  const pool = createPool(config.databaseUrl!);
  const bucket = backupBucket(config.backupStorage!);
  const ctx: BackupContext = {
    config,
    destination: config.backupStorage!,
    bucket,
    pool,
    childEnv: toolEnv(),
    say: (line) => process.stderr.write(`${line}\n`),
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
  const { id, parts, json } = parse('restore', args);
  return withContext('restore', async (ctx) => {
    const result = await restoreBackup(ctx, id, parts);
    process.stdout.write(
      json
        ? `${JSON.stringify(result)}\n`
        : `restored ${result.restored.join(', ')} of backup ${id}: taken at release ${result.release} in write mode ${result.writeMode}; return the deployment there\n`,
    );
  });
}
