/**
 * The operator process's configuration, read once from its environment with the contract's reader:
 * every bad variable is named in one line (a ConfigError) and nothing starts. The one module of the
 * operator that reads `process.env`.
 */
import { hostname } from 'node:os';
import {
  ConfigError,
  ENV,
  ENV_DEFAULTS,
  ENV_LIMITS,
  type Env,
  EnvReader,
  LOG_LEVELS,
  type LogLevel,
  OPERATOR_ENV,
  OPERATOR_ENV_DEFAULTS,
} from '../server/contract/env.ts';

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

export function loadOperatorConfig(env: Env): OperatorConfig {
  const r = new EnvReader(env);
  const port = (name: string, fallback: number) => r.intIn(name, fallback, ENV_LIMITS.port) ?? fallback;
  const watchNamespace = r.raw(OPERATOR_ENV.watchNamespace) ?? '';
  const config: OperatorConfig = {
    logLevel: r.oneOf(ENV.logLevel, LOG_LEVELS, ENV_DEFAULTS.logLevel),
    watchNamespace,
    leaseNamespace: r.raw(OPERATOR_ENV.namespace) ?? (watchNamespace || OPERATOR_ENV_DEFAULTS.leaseNamespace),
    leaderElection: r.bool(OPERATOR_ENV.leaderElection, OPERATOR_ENV_DEFAULTS.leaderElection),
    leaseName: r.raw(OPERATOR_ENV.leaseName) ?? OPERATOR_ENV_DEFAULTS.leaseName,
    identity: r.raw(ENV.podName) ?? `${hostname()}-${process.pid}`,
    healthPort: port(OPERATOR_ENV.healthPort, OPERATOR_ENV_DEFAULTS.healthPort),
    metricsPort: port(OPERATOR_ENV.metricsPort, OPERATOR_ENV_DEFAULTS.metricsPort),
    bindAddress: r.raw(OPERATOR_ENV.bindAddress) ?? r.raw(ENV.host),
    secretRollouts: r.bool(OPERATOR_ENV.secretRollouts, OPERATOR_ENV_DEFAULTS.secretRollouts),
  };
  if (r.problems.length > 0) throw new ConfigError(`invalid configuration: ${r.problems.join('; ')}`);
  return config;
}

/** This process's configuration: what the operator's entry calls once. */
export const operatorProcessConfig = (): OperatorConfig => loadOperatorConfig(process.env);
