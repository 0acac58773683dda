import pino from 'pino';

/**
 * The process logger: JSON lines on stdout. Credentials never reach it: request headers are not
 * serialized, and the redaction paths catch them should an object carrying them be logged.
 */
export function createLogger(name: string): pino.Logger {
  return pino({
    name,
    level: process.env['LOG_LEVEL'] ?? 'info',
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.password', '*.secretKey', 'secretKey'],
      censor: '[redacted]',
    },
  });
}
