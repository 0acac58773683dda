/**
 * The first hour with `observatory dev`, each step through the real CLI as a subprocess: LLM
 * connections work without ENCRYPTION_KEY (dev keeps a key of its own, 0600, and says so once);
 * `create-project`, `create-user` and `create-org-key` reach the running dev with `--data DIR`
 * (its connection file, 0600, gone when dev stops); and a failing command prints one line naming
 * what failed, its stack only with `--verbose`.
 */
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevService, devAuth, startDev } from '../fixtures/dev.ts';
import { removeDirSync } from '../fixtures/processes.ts';
import { cli } from '../fixtures/service.ts';

let dir: string;
let dev: DevService | undefined;
const INFO = { LOG_LEVEL: 'info' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'obs-dev-first-hour-'));
  dev = await startDev(dir, INFO);
});
afterAll(async () => {
  await dev?.stop();
  removeDirSync(dir);
});

const modeOf = (file: string) => statSync(file).mode & 0o777;
const keyLines = (output: string) => output.split('\n').filter((l) => l.includes('ENCRYPTION_KEY'));

async function api(d: { url: string }, auth: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${d.url}${path}`, {
    method,
    headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('observatory dev without ENCRYPTION_KEY', () => {
  it('keeps a key of its own (0600), says so once without the key, and stores LLM connections', async () => {
    const file = join(dir, 'encryption-key');
    const key = readFileSync(file, 'utf8').trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(modeOf(file)).toBe(0o600);
    const output = dev!.process.output();
    expect(keyLines(output)).toHaveLength(1);
    expect(keyLines(output)[0]).toContain(file);
    expect(output).not.toContain(key);

    const put = await api(dev!, devAuth(dev!), 'PUT', '/api/public/llm-connections', {
      provider: 'local',
      adapter: 'openai',
      secretKey: 'sk-dev-first-hour-1234',
      customModels: ['smollm2'],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body['displaySecretKey']).toBe('...1234');
  });
});

describe('the CLI with --data DIR reaches the running dev', () => {
  it('creates a project, a user and an organization key in its database', async () => {
    const connection = join(dir, 'dev-database.json');
    expect(modeOf(connection)).toBe(0o600);

    const project = await cli(['create-project', '--name', 'second', '--data', dir, '--json']);
    expect(project.code, project.stderr).toBe(0);
    const keys = JSON.parse(project.stdout) as { projectId: string; publicKey: string; secretKey: string };
    const own = await api(dev!, devAuth(keys), 'GET', '/api/public/projects');
    expect(own.body['data']).toEqual([expect.objectContaining({ id: keys.projectId, name: 'second' })]);

    const user = await cli(['create-user', '--email', 'newcomer@example.com', '--data', dir, '--json']);
    expect(user.code, user.stderr).toBe(0);
    const { userId } = JSON.parse(user.stdout) as { userId: string };

    const orgKey = await cli(['create-org-key', '--data', dir, '--json']);
    expect(orgKey.code, orgKey.stderr).toBe(0);
    const org = devAuth(JSON.parse(orgKey.stdout) as { publicKey: string; secretKey: string });
    const projects = await api(dev!, org, 'GET', '/api/public/organizations/projects');
    expect(projects.body['projects']).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: keys.projectId })]),
    );
    const members = await api(dev!, org, 'GET', '/api/public/organizations/memberships');
    expect(members.body['memberships']).toEqual(
      expect.arrayContaining([expect.objectContaining({ userId, email: 'newcomer@example.com' })]),
    );
  });
});

describe('a failing CLI command', () => {
  it('prints one line naming what failed; the stack only with --verbose; never the password', async () => {
    const { databaseUrl } = JSON.parse(readFileSync(join(dir, 'dev-database.json'), 'utf8')) as {
      databaseUrl: string;
    };
    const url = new URL(databaseUrl);
    const realPassword = url.password;
    url.password = 'not-the-password';
    const env = { DATABASE_URL: url.toString() };

    const refused = await cli(['create-project', '--name', 'x'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'observatory create-project: PostgreSQL: password authentication failed for user "postgres"\n',
    );

    const verbose = await cli(['create-project', '--name', 'x', '--verbose'], env);
    expect(verbose.code).toBe(1);
    expect(verbose.stderr.split('\n')[0]).toBe(refused.stderr.trim());
    expect(verbose.stderr).toMatch(/\n\s+at /);
    for (const r of [refused, verbose]) {
      expect(r.stderr).not.toContain('not-the-password');
      expect(r.stderr).not.toContain(realPassword);
    }
  });

  it('after dev stops: its connection file is gone, the key stays, and --data names what is missing', async () => {
    await dev!.stop();
    dev = undefined;
    const r = await cli(['create-user', '--email', 'late@example.com', '--data', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `observatory create-user: no observatory dev is running on ${dir} (${join(dir, 'dev-database.json')} is missing)\n`,
    );

    // A restart reuses the data directory's key, silently.
    const key = readFileSync(join(dir, 'encryption-key'), 'utf8');
    dev = await startDev(dir, INFO);
    expect(readFileSync(join(dir, 'encryption-key'), 'utf8')).toBe(key);
    expect(keyLines(dev.process.output())).toEqual([]);
    const list = await api(dev, devAuth(dev), 'GET', '/api/public/llm-connections');
    expect(list.body['data']).toEqual([expect.objectContaining({ provider: 'local' })]);
  });
});
