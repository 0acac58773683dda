/**
 * The operator process's configuration: one zod schema built from the contract's names and
 * defaults, parsed once from its environment; every bad variable is named in one line (a
 * ConfigError) and nothing starts. The one module of the operator that reads `process.env`.
 */
import { hostname } from 'node:os';
import { z } from 'zod';
import {
  ENV,
  ENV_LIMITS,
  type Env,
  type LogLevel,
  OPERATOR_ENV,
  OPERATOR_ENV_DEFAULTS,
} from '../server/contract/env.ts';
import { bool, intOr, logLevel, parseEnv, text, textOr } from '../server/contract/env-schema.ts';

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

const operatorSchema = z
  .object({
    [ENV.logLevel]: logLevel(),
    [OPERATOR_ENV.watchNamespace]: textOr(''),
    [OPERATOR_ENV.namespace]: text(),
    [OPERATOR_ENV.leaderElection]: bool(OPERATOR_ENV_DEFAULTS.leaderElection),
    [OPERATOR_ENV.leaseName]: textOr(OPERATOR_ENV_DEFAULTS.leaseName),
    [ENV.podName]: text(),
    [OPERATOR_ENV.healthPort]: intOr(ENV_LIMITS.port, OPERATOR_ENV_DEFAULTS.healthPort),
    [OPERATOR_ENV.metricsPort]: intOr(ENV_LIMITS.port, OPERATOR_ENV_DEFAULTS.metricsPort),
    [OPERATOR_ENV.bindAddress]: text(),
    [ENV.host]: text(),
    [OPERATOR_ENV.secretRollouts]: bool(OPERATOR_ENV_DEFAULTS.secretRollouts),
  })
  .transform(
    (v): OperatorConfig => ({
      logLevel: v[ENV.logLevel],
      watchNamespace: v[OPERATOR_ENV.watchNamespace],
      leaseNamespace:
        v[OPERATOR_ENV.namespace] ?? (v[OPERATOR_ENV.watchNamespace] || OPERATOR_ENV_DEFAULTS.leaseNamespace),
      leaderElection: v[OPERATOR_ENV.leaderElection],
      leaseName: v[OPERATOR_ENV.leaseName],
      identity: v[ENV.podName] ?? `${hostname()}-${process.pid}`,
      healthPort: v[OPERATOR_ENV.healthPort],
      metricsPort: v[OPERATOR_ENV.metricsPort],
      bindAddress: v[OPERATOR_ENV.bindAddress] ?? v[ENV.host],
      secretRollouts: v[OPERATOR_ENV.secretRollouts],
    }),
  );

export const loadOperatorConfig = (env: Env): OperatorConfig => parseEnv(operatorSchema, env);

/** This process's configuration: what the operator's entry calls once. */
export const operatorProcessConfig = (): OperatorConfig => loadOperatorConfig(process.env);
