import { pino, type Logger } from 'pino';

// One structured logger (JSON lines on stdout). Level from LOG_LEVEL; tests default to
// silent so that their output stays readable.
export function createLogger(level: string, name = 'rgs'): Logger {
  return pino({ name, level, base: { pid: process.pid } });
}

export type { Logger };
