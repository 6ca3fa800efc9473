import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * One pino logger per process. Request handlers log through `logger.child({ request_id })`, so
 * every line of a request carries the id the client sees in `X-Request-Id` and in error bodies.
 */
export function createLogger(options: { service: string; level: string }): Logger {
  return pino({
    level: options.level,
    base: { service: options.service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', '*.password', '*.secret', '*.token'],
      censor: '[redacted]',
    },
  });
}
