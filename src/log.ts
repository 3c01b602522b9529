/**
 * Structured logs (pino): one JSON line per event, `{"time", "level", "message", ...fields}`, on
 * stdout, errors on stderr (the command-line tools' own lines all on stderr, `stderrLog`). LOG_LEVEL
 * picks the least severe level written: `info` by default (start-up, shutdown, loads, jobs, warnings
 * and errors), `debug` adds a line per HTTP request, `silent` writes nothing. On a terminal the lines
 * are shown pretty (pino-pretty) unless LOG_FORMAT=json.
 */
import pino, { type Logger } from 'pino';

export type LogFields = Record<string, unknown>;

function createLogger(toStderr = false): Logger {
  const level = process.env.LOG_LEVEL || 'info';
  const options: pino.LoggerOptions = {
    level,
    base: undefined,
    messageKey: 'message',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  if (toStderr) return pino(options, pino.destination({ fd: 2, sync: true }));
  if (process.stdout.isTTY && process.env.LOG_FORMAT !== 'json') {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const pretty = require('pino-pretty') as (options: object) => NodeJS.WritableStream;
      return pino(options, pretty({ messageKey: 'message', translateTime: 'SYS:HH:MM:ss.l', destination: 1 }));
    } catch {
      // Not installed (a production image): JSON lines.
    }
  }
  // Each line to the most severe stream that takes its level: errors to stderr only.
  return pino(
    options,
    pino.multistream(
      [
        { level: 'trace', stream: pino.destination({ fd: 1, sync: true }) },
        { level: 'error', stream: pino.destination({ fd: 2, sync: true }) },
      ],
      { dedupe: true },
    ),
  );
}

let logger: Logger | undefined;
/** Made on first use, so that LOG_LEVEL set by a test or a bench before it counts. */
const current = (): Logger => (logger ??= createLogger());

let stderrLogger: Logger | undefined;

/**
 * The same JSON lines, all on stderr: for the command-line tools, whose stdout carries their one
 * summary line (a load's progress goes here).
 */
export const stderrLog = {
  info: (message: string, fields: LogFields = {}): void => (stderrLogger ??= createLogger(true)).info(fields, message),
};

export const log = {
  /** True under LOG_LEVEL=debug (or trace): the request lines are written only then. */
  get debugEnabled(): boolean {
    return current().isLevelEnabled('debug');
  },
  debug: (message: string, fields: LogFields = {}): void => current().debug(fields, message),
  info: (message: string, fields: LogFields = {}): void => current().info(fields, message),
  warn: (message: string, fields: LogFields = {}): void => current().warn(fields, message),
  error: (message: string, fields: LogFields = {}): void => current().error(fields, message),
};
