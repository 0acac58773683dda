/**
 * `observatory create-user --email EMAIL [--name NAME] [--role owner|member|viewer]
 * [--project ID | --org ID] [--password-stdin] [--data DIR] [--json]`: a web UI user with one membership (the
 * default organization unless a project or organization is named; role `member` by default). The
 * password is read from stdin with `--password-stdin` (never from the command line, which other
 * users of the machine can see), else generated and printed once. `--data DIR`: in the database of
 * the `observatory dev` running on DIR, not DATABASE_URL's.
 */
import { text } from 'node:stream/consumers';
import { provisionUser } from '../features/users/provision.ts';
import { checkEmail, checkPassword, UserExists } from '../features/users/store.ts';
import { processConfig } from '../kernel/config/processes.ts';
import { isRole, ROLES } from '../kernel/roles.ts';
import { createPool } from '../platform/datastores/postgres.ts';
import { RelationalMigrator } from '../platform/migrations/relational/runner.ts';
import { relationalMigrationsFor } from '../platform/migrations/relational/versions.ts';
import { devDatabase } from './dev-data.ts';
import { parseFlags, UsageError } from './usage.ts';

const USAGE =
  'usage: observatory create-user --email EMAIL [--name NAME] [--role owner|member|viewer] [--project ID | --org ID] [--password-stdin] [--data DIR] [--json]';

export async function run(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    email: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string' },
    project: { type: 'string' },
    org: { type: 'string' },
    'password-stdin': { type: 'boolean' },
    data: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (!values.email) throw new UsageError(USAGE);
  const emailProblem = checkEmail(values.email);
  if (emailProblem) throw new UsageError(`--${emailProblem}`);
  const role = values.role ?? 'member';
  if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  if (values.project && values.org) throw new UsageError('--project and --org are mutually exclusive');
  const given = values['password-stdin'] ? (await text(process.stdin)).replace(/\r?\n$/, '') : undefined;
  const passwordProblem =
    given === undefined ? undefined : checkPassword(given, values.email, '--password-stdin');
  if (passwordProblem) throw new UsageError(passwordProblem);

  const config = processConfig('create-user', devDatabase(values.data));
  const pool = createPool(config.databaseUrl!, 1);
  try {
    await new RelationalMigrator(pool, relationalMigrationsFor(config.mode.release)).up();
    const target = values.project
      ? await pool.query('SELECT 1 FROM projects WHERE id = $1', [values.project])
      : await pool.query('SELECT 1 FROM organizations WHERE id = $1', [values.org ?? 'default']);
    if (target.rowCount === 0) {
      process.stderr.write(
        `observatory create-user: ${values.project ? `project ${values.project}` : `organization ${values.org}`} not found\n`,
      );
      return 1;
    }
    const { user, password } = await provisionUser(pool, {
      email: values.email,
      name: values.name,
      password: given,
      role,
      projectId: values.project,
      orgId: values.org,
    });
    const shown = given === undefined ? { password } : {};
    process.stdout.write(
      values.json
        ? `${JSON.stringify({ userId: user.id, email: user.email, role, ...shown })}\n`
        : `user ${user.id} ${user.email} (${role})${given === undefined ? `\npassword ${password} (shown once)` : ''}\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof UserExists) {
      process.stderr.write(`observatory create-user: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await pool.end();
  }
}
