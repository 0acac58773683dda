/**
 * The `observatory` CLI: one binary, the first argument selects the role. Each command module is
 * loaded on demand so that, e.g., `migrate` does not load the web server.
 * Exit codes: 0 success, 1 failure, 2 usage or configuration error.
 */

import { exitOnSignal } from '../app/runtime/shutdown.ts';
import { PORTS } from '../contract/ports.ts';
import { type Command, runCommand } from './run-command.ts';

interface CommandEntry {
  summary: string;
  load: () => Promise<Command>;
  /** A server that drains and closes on SIGTERM itself; every other command ends at once. */
  graceful?: true;
}

const COMMANDS: Record<string, CommandEntry> = {
  web: {
    summary: `serve the web container (port ${PORTS.web})`,
    load: async () => (await import('./web.ts')).run,
    graceful: true,
  },
  worker: {
    summary: `run the worker container (port ${PORTS.worker})`,
    load: async () => (await import('./worker.ts')).run,
    graceful: true,
  },
  migrate: {
    summary:
      'apply or rewind schema migrations: up [--to N] | down --to N [--log-wait-seconds S] | status [--json]',
    load: async () => (await import('./migrate.ts')).run,
  },
  'analytics-server': {
    summary: 'serve the embedded analytics engine over the ClickHouse HTTP interface: --port N --data DIR',
    load: async () => (await import('./analytics-server.ts')).run,
    graceful: true,
  },
  dev: {
    summary: 'everything in one process on embedded datastores: [--port N] [--data DIR] [--json]',
    load: async () => (await import('./dev.ts')).run,
    graceful: true,
  },
  backfill: {
    summary: 'one step of the historic backfill: run --step N | retry --step N | status [--json]',
    load: async () => (await import('./backfill.ts')).run,
  },
  preflight: {
    summary: 'checks before upgrading release 3 to version 4 [--json]',
    load: async () => (await import('./preflight.ts')).run,
  },
  producers: {
    summary: 'producers on paths events_only refuses: --since DURATION [--json]',
    load: async () => (await import('./producers.ts')).run,
  },
  cleanup: {
    summary: 'after the cutover: truncate-legacy-tables (never drops)',
    load: async () => (await import('./cleanup.ts')).run,
  },
  backup: {
    summary: 'back up both databases to the backup bucket: --id ID [--include analytics,relational] [--json]',
    load: async () => (await import('./backup.ts')).backup,
  },
  restore: {
    summary:
      'restore both databases from a complete backup: --id ID [--include analytics,relational] [--json]',
    load: async () => (await import('./backup.ts')).restore,
  },
  'backup-prune': {
    summary:
      'delete the backups retention expires: [--keep-last N] [--max-age DURATION] [--protect ID,...] [--json]',
    load: async () => (await import('./backup.ts')).prune,
  },
  'backup-verify': {
    summary:
      'restore a complete backup into scratch databases and compare it with its manifest: --id ID [--json]',
    load: async () => (await import('./backup.ts')).verify,
  },
  operator: {
    summary: 'the Kubernetes operator of ObservabilityService (kubeconfig from KUBECONFIG or in-cluster)',
    load: async () => (await import('./operator.ts')).run,
    graceful: true,
  },
  models: {
    summary: 'load built-in model prices from a price file: load FILE [--json]',
    load: async () => (await import('./models.ts')).run,
  },
  'recompute-costs': {
    summary:
      'recompute computed (never sent) costs with the current model definitions, resumable: --from ISO --to ISO [--project ID] [--batch-size N] [--json]',
    load: async () => (await import('./recompute-costs.ts')).run,
  },
  ingestion: {
    summary:
      'rebuild analytics rows from the ingestion log: replay --from ISO --to ISO [--project ID] [--json]',
    load: async () => (await import('./ingestion.ts')).run,
  },
  'create-project': {
    summary: 'create a project and print its keys: --name NAME [--data DIR] [--json]',
    load: async () => (await import('./create-project.ts')).run,
  },
  'create-user': {
    summary:
      'create a web UI user: --email EMAIL [--name NAME] [--role owner|member|viewer] [--project ID | --org ID] [--password-stdin] [--data DIR] [--json]',
    load: async () => (await import('./create-user.ts')).run,
  },
  'create-org-key': {
    summary:
      "create an organization's API key (projects and memberships administration): [--org ID] [--note TEXT] [--data DIR] [--json]",
    load: async () => (await import('./create-org-key.ts')).run,
  },
};

function help(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(18)} ${c.summary}`);
  return [
    'usage: observatory <command> [options] [--verbose]',
    '',
    'commands:',
    ...rows,
    '',
    'A failure prints one line; --verbose adds its stack.',
  ].join('\n');
}

/** `--verbose` is the CLI's own flag, taken out before the command parses the rest (up to a `--`). */
export function takeVerbose(args: string[]): { verbose: boolean; rest: string[] } {
  const end = args.indexOf('--');
  const own = end === -1 ? args : args.slice(0, end);
  const tail = end === -1 ? [] : args.slice(end);
  const rest = [...own.filter((a) => a !== '--verbose'), ...tail];
  return { verbose: rest.length !== args.length, rest };
}

export async function main(argv: string[]): Promise<number> {
  const { verbose, rest: args } = takeVerbose(argv);
  const [name, ...rest] = args;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${help()}\n`);
    return name ? 0 : 2;
  }
  // Own entries only: `observatory constructor` is an unknown command, not Object's constructor.
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(`observatory: unknown command "${name}"\n${help()}\n`);
    return 2;
  }
  if (!command.graceful) exitOnSignal();
  return runCommand(name, command.load, rest, { verbose });
}
