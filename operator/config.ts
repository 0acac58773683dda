/**
 * The operator process's configuration: one zod schema built from the contract's names and
 * defaults, parsed once from its environment; every bad variable is named in one line (a
 * ConfigError) and nothing starts. The one module of the operator that reads `process.env`.
 */
import { hostname } from 'node:os';
import {
  ENV,
  ENV_LIMITS,
  type Env,
  type LogLevel,
  OPERATOR_ENV,
  OPERATOR_ENV_DEFAULTS,
} from '../server/contract/env.ts';
import { bool, fields, intOr, logLevel, parseEnv, text, textOr } from '../server/contract/env-schema.ts';

export interface OperatorConfig {
  logLevel: LogLevel;
  /** The one namespace watched; empty: all. */
  watchNamespace: string;
  leaseNamespace: string;
  leaderElection: boolean;
  leaseName: string;
  /** The leader identity. */
  identity: string;
  healthPort: number;
  metricsPort: number;
  /** undefined: every address. */
  bindAddress: string | undefined;
  secretRollouts: boolean;
}

/** The operator's schema, beside the server's processes' in the docs' table of variables. */
export const operatorSchema = fields({
  logLevel: [ENV.logLevel, logLevel()],
  watchNamespace: [OPERATOR_ENV.watchNamespace, textOr('')],
  namespace: [OPERATOR_ENV.namespace, text()],
  leaderElection: [OPERATOR_ENV.leaderElection, bool(OPERATOR_ENV_DEFAULTS.leaderElection)],
  leaseName: [OPERATOR_ENV.leaseName, textOr(OPERATOR_ENV_DEFAULTS.leaseName)],
  podName: [ENV.podName, text()],
  healthPort: [OPERATOR_ENV.healthPort, intOr(ENV_LIMITS.port, OPERATOR_ENV_DEFAULTS.healthPort)],
  metricsPort: [OPERATOR_ENV.metricsPort, intOr(ENV_LIMITS.port, OPERATOR_ENV_DEFAULTS.metricsPort)],
  bindAddress: [OPERATOR_ENV.bindAddress, text()],
  host: [ENV.host, text()],
  secretRollouts: [OPERATOR_ENV.secretRollouts, bool(OPERATOR_ENV_DEFAULTS.secretRollouts)],
}).transform(
  ({ namespace, podName, bindAddress, host, ...c }): OperatorConfig => ({
    ...c,
    leaseNamespace: namespace ?? (c.watchNamespace || OPERATOR_ENV_DEFAULTS.leaseNamespace),
    identity: podName ?? `${hostname()}-${process.pid}`,
    bindAddress: bindAddress ?? host,
  }),
);

export const loadOperatorConfig = (env: Env): OperatorConfig => parseEnv(operatorSchema, env);

/** This process's configuration: what the operator's entry calls once. */
export const operatorProcessConfig = (): OperatorConfig => loadOperatorConfig(process.env);
