/**
 * The command line of `kubectl observatory`: the subcommand, its arguments and the connection
 * flags kubectl plugins take themselves (kubectl passes none of its own flags to a plugin). Pure.
 */
import { parseArgs as parseArgv } from 'node:util';
import { BACKUP_ID_PATTERN } from '../../server/contract/backup.ts';

export type Output = 'text' | 'json';

export type Command =
  | { kind: 'help'; topic?: Subcommand }
  | { kind: 'status'; name?: string; output: Output }
  | { kind: 'plan'; name?: string; output: Output }
  | { kind: 'approve'; name?: string }
  | { kind: 'retry-backfill'; name?: string; step: number }
  | { kind: 'logs'; name?: string; tail?: number }
  /** `to`: a directory, or a file ending in .tar.gz; absent: a .tar.gz named after the object. */
  | { kind: 'report'; name?: string; to?: string }
  /** `now` asks for one; `list` prints status.backups and the schedule. */
  | { kind: 'backup'; action: 'now' | 'list'; name?: string; output: Output }
  | { kind: 'restore'; name?: string; backupId: string }
  | { kind: 'hibernate'; name?: string }
  | { kind: 'wake'; name?: string };

export interface Connection {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export interface Invocation {
  command: Command;
  connection: Connection;
}

export const SUBCOMMANDS = [
  'status',
  'plan',
  'approve',
  'retry-backfill',
  'logs',
  'report',
  'backup',
  'restore',
  'hibernate',
  'wake',
] as const;
export type Subcommand = (typeof SUBCOMMANDS)[number];

/** A mistake on the command line: exit code 2 with this one line. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The flags: the connection's (as kubectl's own), and those of some subcommands. */
const OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  output: { type: 'string', short: 'o' },
  tail: { type: 'string' },
  id: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;
type ValueFlag = Exclude<keyof typeof OPTIONS, 'help'>;

/** Which subcommand takes which optional flag besides the connection flags. */
const ACCEPTS: Record<Subcommand, readonly ('output' | 'tail' | 'id')[]> = {
  status: ['output'],
  plan: ['output'],
  approve: [],
  'retry-backfill': [],
  logs: ['tail'],
  report: ['output'],
  backup: ['output'],
  restore: ['id'],
  hibernate: [],
  wake: [],
};

const POSITIONALS: Record<Subcommand, string> = {
  status: '[NAME]',
  plan: '[NAME]',
  approve: '[NAME]',
  'retry-backfill': 'STEP [NAME]',
  logs: '[NAME]',
  report: '[NAME]',
  backup: '[now|list] [NAME]',
  restore: '[--id] BACKUP_ID [NAME]',
  hibernate: '[NAME]',
  wake: '[NAME]',
};

/**
 * Splits `--flag=value`, `-nvalue` and `--flag value` into flags and positionals: node:util's
 * scanner, lenient, so that each mistake is named in the plugin's own words.
 */
function scan(argv: readonly string[]) {
  const { tokens } = parseArgv({
    args: [...argv],
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Partial<Record<ValueFlag, string>> = {};
  const positionals: string[] = [];
  let help = false;
  for (const t of tokens) {
    if (t.kind === 'positional') positionals.push(t.value);
    if (t.kind !== 'option') continue;
    // Short flags do not combine (`-hn`): only -n and -o take their value attached (`-nobs`).
    const arg = argv[t.index]!;
    if (!arg.startsWith('--') && arg.length > 2 && !/^-[no]/.test(arg))
      throw new UsageError(`unknown flag ${arg.split('=')[0]}`);
    if (!Object.hasOwn(OPTIONS, t.name) || (t.name === 'help' && t.value !== undefined))
      throw new UsageError(`unknown flag ${t.rawName}`);
    if (t.name === 'help') {
      help = true;
      continue;
    }
    // A shorthand takes `-n=obs` as `obs`, as kubectl's own flags do.
    const value = t.inlineValue && !t.rawName.startsWith('--') ? t.value?.replace(/^=/, '') : t.value;
    // A flag never takes the next flag as its value.
    if (!value || (!t.inlineValue && value.startsWith('-') && value !== '-'))
      throw new UsageError(`flag ${t.rawName} needs a value`);
    values[t.name as ValueFlag] = value;
  }
  return { values, positionals, help };
}

const isSubcommand = (s: string | undefined): s is Subcommand => SUBCOMMANDS.includes(s as Subcommand);

function outputOf(value: string | undefined): Output {
  if (value === undefined) return 'text';
  if (value === 'json') return 'json';
  throw new UsageError(`--output ${value} is not supported: use -o json or leave it out`);
}

function stepOf(value: string | undefined): number {
  if (value === undefined)
    throw new UsageError('retry-backfill needs the STEP to retry, e.g. retry-backfill 3');
  if (!/^[1-9]\d{0,2}$/.test(value)) throw new UsageError(`STEP must be a step number, not "${value}"`);
  return Number(value);
}

function backupIdOf(value: string | undefined): string {
  if (value === undefined)
    throw new UsageError('restore needs the BACKUP_ID to restore (kubectl observatory status lists them)');
  if (!new RegExp(BACKUP_ID_PATTERN).test(value))
    throw new UsageError(`BACKUP_ID must be a backup id (lower-case letters, digits, '-'), not "${value}"`);
  return value;
}

function tailOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`--tail must be a number of lines, not "${value}"`);
  return Number(value);
}

export function parseArgs(argv: readonly string[]): Invocation {
  const { values, positionals, help } = scan(argv);
  const connection: Connection = {
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
  };
  const [sub, ...rest] = positionals;
  if (sub === undefined || sub === 'help') {
    const topic = rest[0];
    if (topic !== undefined && !isSubcommand(topic)) throw new UsageError(`unknown command "${topic}"`);
    return { command: topic ? { kind: 'help', topic } : { kind: 'help' }, connection };
  }
  if (!isSubcommand(sub))
    throw new UsageError(`unknown command "${sub}": use one of ${SUBCOMMANDS.join(', ')}`);
  if (help) return { command: { kind: 'help', topic: sub }, connection };
  for (const flag of ['output', 'tail', 'id'] as const)
    if (values[flag] !== undefined && !ACCEPTS[sub].includes(flag))
      throw new UsageError(`${sub} does not take --${flag}`);
  const max = sub === 'restore' ? (values.id === undefined ? 2 : 1) : POSITIONALS[sub].split(' ').length;
  if (rest.length > max) throw new UsageError(`${sub} takes ${POSITIONALS[sub]}; unexpected "${rest[max]}"`);
  const named = (n: string | undefined) => (n === undefined ? {} : { name: n });
  switch (sub) {
    case 'status':
    case 'plan':
      return { command: { kind: sub, ...named(rest[0]), output: outputOf(values.output) }, connection };
    case 'approve':
    case 'hibernate':
    case 'wake':
      return { command: { kind: sub, ...named(rest[0]) }, connection };
    case 'retry-backfill':
      return { command: { kind: sub, step: stepOf(rest[0]), ...named(rest[1]) }, connection };
    case 'report':
      return {
        command: {
          kind: sub,
          ...named(rest[0]),
          ...(values.output !== undefined ? { to: values.output } : {}),
        },
        connection,
      };
    case 'backup': {
      // `backup NAME` (before now|list existed) still asks for one.
      const action = rest[0] === 'now' || rest[0] === 'list' ? rest[0] : undefined;
      const name = action ? rest[1] : rest[0];
      if (action !== 'list' && values.output !== undefined)
        throw new UsageError('backup now does not take --output');
      return {
        command: { kind: sub, action: action ?? 'now', ...named(name), output: outputOf(values.output) },
        connection,
      };
    }
    case 'restore': {
      const [id, name] = values.id !== undefined ? [values.id, rest[0]] : [rest[0], rest[1]];
      return { command: { kind: sub, backupId: backupIdOf(id), ...named(name) }, connection };
    }
    case 'logs': {
      const tail = tailOf(values.tail);
      return {
        command: { kind: sub, ...named(rest[0]), ...(tail !== undefined ? { tail } : {}) },
        connection,
      };
    }
  }
}

const COMMON = `Flags of every command:
  --kubeconfig PATH     kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)
  --context NAME        kubeconfig context (default: the current context)
  -n, --namespace NS    namespace (default: the context's namespace, then "default")
  -h, --help            this help

NAME may be left out when the namespace holds exactly one ObservabilityService.
Exit codes: 0 success, 1 failure (not found, no access, refused), 2 usage or kubeconfig error.`;

const SUMMARIES: Record<Subcommand, string> = {
  status: 'state, gates, blocked-by and backfill progress (-o json)',
  plan: "the operator's next actions for the current spec (a dry run)",
  approve: 'approve the cutover for the current generation',
  'retry-backfill': 'retry a failed backfill step',
  logs: 'logs of the current backfill Job (--tail N)',
  report: 'a support bundle, secrets redacted (-o DIR or FILE.tar.gz)',
  backup: 'take a backup now, or list them with the schedule (spec.backup)',
  restore: 'restore a backup, scaled to zero meanwhile',
  hibernate: 'drain and scale web and worker to zero, keeping everything (spec.hibernate)',
  wake: 'bring a hibernated deployment back as it was',
};

const TOPICS: Record<Subcommand, string> = {
  status: `kubectl observatory status [NAME] [-o json]
  The object's state, phase, gates (each condition with its reason and message), what it is
  blocked by, what the operator does next, and the backfill progress as a bar per step.
  -o json prints {"name","namespace","generation","observedGeneration","state","targetState",
  "desiredWriteMode","phase","ready","stalled","gates":[{"type","status","reason","message"}],
  "blockedBy":[...],"plannedActions":[...],"backfill":{"completedSteps","totalSteps","currentStep",
  "currentJob","steps":[{"step","status","chunksDone","chunksTotal"}]}|null}.`,
  plan: `kubectl observatory plan [NAME] [-o json]
  The operator's planner run locally on the live object and the objects it reads (Deployments,
  Services, PodDisruptionBudgets, NetworkPolicies, Jobs, worker Pods and their reports through the
  API server's Pod proxy, labeled Secrets and ConfigMaps): the actions it would take next, in order. A dry
  run: nothing is written. Before each backfill step still to run: the rows it moves, the free
  disk it needs in the analytics store (3x the bytes it still reads) and the time it takes at the
  rate measured on the chunks finished so far (from the worker's backfill report).`,
  approve: `kubectl observatory approve [NAME]
  Approves the cutover to EventsOnly for the object's current generation (the annotation the
  operator reads), refused when the object changed since it was read.`,
  'retry-backfill': `kubectl observatory retry-backfill STEP [NAME]
  Asks the operator to retry the failed backfill step STEP (the retry annotation, with a value the
  operator has not acted on before). Refused for a step that is not enabled or has not failed.`,
  logs: `kubectl observatory logs [NAME] [--tail N]
  The logs of the Pod of the current backfill Job (status.backfill.currentJob), newest Pod first.`,
  report: `kubectl observatory report [NAME] [-o DIR|FILE.tar.gz]
  Writes a support bundle: the object, the Events of it and of its children, every object it owns
  (Deployments, ReplicaSets, Jobs, Pods, Services, ConfigMaps, PodDisruptionBudgets,
  NetworkPolicies), the logs of its Jobs' Pods (preflight, schema, backfill), each worker Pod's health, producer and backfill
  (background_migrations) reports, and the Secrets it refers to as names and keys only. Every
  value of a readable Secret, raw or base64, is replaced by [REDACTED] in every file. -o names a
  directory (created; it must be empty) or a .tar.gz file; default observatory-report-NAME-TIME.tar.gz.`,
  backup: `kubectl observatory backup [now|list] [NAME] [-o json]
  now (the default): asks the operator for a backup now, into spec.backup's destination (the
  annotation observatory.dev/backup-requested, with an id naming the moment). Its Job, size and
  result show in status.backups and in the ConfigMap NAME-backup-ID. Refused without spec.backup.
  list: the backups of status.backups, newest first (id, trigger, result, when, release and write
  mode, objects, bytes), and the schedule (spec.backup.schedule): the next backup, the latest
  successful one, how many retention kept, and the latest verification (spec.backup.verify). -o
  json prints {"backups":[...],"schedule":{...}|null,"verification":{...}|null} with
  status.backups, status.backupSchedule and status.backupVerification as they are.`,
  restore: `kubectl observatory restore BACKUP_ID [NAME], or restore --id BACKUP_ID [NAME]
  Asks the operator to restore a complete backup of status.backups (the annotation
  observatory.dev/restore-requested): web and worker scale to zero, the restore Job runs, and the
  deployment returns to the release and write mode the backup was taken in. Refused unless the
  spec already asks for that release and write mode.`,
  hibernate: `kubectl observatory hibernate [NAME]
  Sets spec.hibernate: true: the web scales to zero, the workers drain the ingestion log's backlog
  and follow, a running backfill step stops at its last chunk, and scheduled work pauses. The
  datastores, the state and its settings are kept; status.phase reads Hibernated once no Pod is
  left. Refused while the cutover to EventsOnly is in progress. With GitOps, set the field in Git.`,
  wake: `kubectl observatory wake [NAME]
  Sets spec.hibernate: false: web and worker come back in the state, settings and image they had,
  and the backfill resumes where it stopped.`,
};

export function usage(topic?: Subcommand): string {
  if (topic) return `${TOPICS[topic]}\n\n${COMMON}\n`;
  return `kubectl observatory: inspect and steer an ObservabilityService migration.

Commands:
${SUBCOMMANDS.map((s) => `  ${`${s} ${POSITIONALS[s]}`.padEnd(28)}${SUMMARIES[s]}`).join('\n')}

Run "kubectl observatory COMMAND --help" for a command's details.

${COMMON}
`;
}
