import pino from 'pino';
import type { LogLevel } from '../../contract/env.ts';

/**
 * The process logger: JSON lines on stdout. Credentials never reach it: request headers are not
 * serialized, and the redaction paths catch them should an object carrying them be logged.
 */
export function createLogger(name: string, level: LogLevel): pino.Logger {
  return pino({
    name,
    level,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.password', '*.secretKey', 'secretKey'],
      censor: '[redacted]',
    },
  });
}
