/** Structured logs: one JSON line per event on stdout (stderr for errors). */
export type LogFields = Record<string, unknown>;

const silent = (): boolean => process.env.LOG_LEVEL === 'silent';

function write(level: 'info' | 'warn' | 'error', message: string, fields: LogFields): void {
  if (silent()) return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, message, ...fields });
  (level === 'error' ? process.stderr : process.stdout).write(`${line}\n`);
}

export const log = {
  /** False under LOG_LEVEL=silent: callers can skip gathering what they would log. */
  get enabled(): boolean { return !silent(); },
  info: (message: string, fields: LogFields = {}): void => write('info', message, fields),
  warn: (message: string, fields: LogFields = {}): void => write('warn', message, fields),
  error: (message: string, fields: LogFields = {}): void => write('error', message, fields),
};
