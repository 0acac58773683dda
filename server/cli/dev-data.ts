/**
 * The files `observatory dev` keeps in its data directory beside the databases, each readable by
 * this user only (0600): the key that seals stored secrets when ENCRYPTION_KEY is not set, and the
 * connection file through which the CLI's `--data DIR` reaches the running dev's PostgreSQL (whose
 * password is generated at each start).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ENV } from '../contract/env.ts';
import { ConfigError, encryptionKeyText } from '../kernel/config/env.ts';
import type { ProcessConfigOptions } from '../kernel/config/processes.ts';

/**
 * Writes `file` readable by this user only. A fresh file renamed into place: an existing file's
 * looser mode never sees the secret, and a reader never sees half of it.
 */
export function writeSecretFile(file: string, text: string): void {
  const fresh = `${file}.${process.pid}.tmp`;
  rmSync(fresh, { force: true });
  writeFileSync(fresh, text, { mode: 0o600, flag: 'wx' });
  renameSync(fresh, file);
}

export interface DevEncryptionKey {
  key: Buffer;
  file: string;
  /** Made by this start (none was there). */
  created: boolean;
}

/** The data directory's own key: the one kept there, else a new one written there. */
export function devEncryptionKey(dataDir: string): DevEncryptionKey {
  const file = join(dataDir, 'encryption-key');
  if (existsSync(file)) {
    const kept = encryptionKeyText.safeParse(readFileSync(file, 'utf8').trim());
    if (!kept.success) {
      throw new ConfigError(`${file} must hold 64 hex characters: the key of the secrets stored here`);
    }
    return { key: kept.data, file, created: false };
  }
  const key = randomBytes(32);
  writeSecretFile(file, `${key.toString('hex')}\n`);
  return { key, file, created: true };
}

const connectionFile = (dataDir: string) => join(dataDir, 'dev-database.json');

/** Written once dev's PostgreSQL listens; removed when dev stops. */
export function writeDevConnection(dataDir: string, databaseUrl: string): () => void {
  const file = connectionFile(dataDir);
  writeSecretFile(file, `${JSON.stringify({ databaseUrl })}\n`);
  return () => rmSync(file, { force: true });
}

/** The configuration override that points a command at the dev running on `dataDir`. */
export function devDatabase(dataDir: string | undefined): ProcessConfigOptions {
  if (dataDir === undefined) return {};
  const file = connectionFile(resolve(dataDir));
  if (!existsSync(file)) {
    throw new Error(`no observatory dev is running on ${resolve(dataDir)} (${file} is missing)`);
  }
  const { databaseUrl } = JSON.parse(readFileSync(file, 'utf8')) as { databaseUrl: string };
  return { overrides: { [ENV.databaseUrl]: databaseUrl } };
}
