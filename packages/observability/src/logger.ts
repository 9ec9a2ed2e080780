import { Writable } from 'node:stream';
import winston from 'winston';

export type Logger = winston.Logger;

// Keys whose values are secrets wherever they appear in a log entry: credentials tokens travel in
// Authorization headers and in credentials objects, and must never reach a log.
const SECRET_KEYS = new Set(['authorization', 'token', 'partnertoken', 'hubtoken', 'initialtoken', 'secret', 'password']);

function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  // An Error's name, message and stack are not enumerable: without this an unexpected failure logged
  // as { err } reads `"err":{}`, the one entry a post-mortem needs.
  if (value instanceof Error) {
    out['name'] = value.name;
    out['message'] = value.message;
    if (value.stack !== undefined) out['stack'] = value.stack;
    if (value.cause !== undefined) out['cause'] = redact(value.cause, depth + 1);
  }
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEYS.has(k.toLowerCase().replace(/[-_]/g, '')) ? '[redacted]' : redact(v, depth + 1);
  }
  return out;
}

const redactSecrets = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (SECRET_KEYS.has(key.toLowerCase().replace(/[-_]/g, ''))) info[key] = '[redacted]';
    else info[key] = redact(info[key]);
  }
  return info;
});

/**
 * Standard output written in batches: process.stdout is synchronous on pipes and files, so one write
 * per log line costs a system call on the request path. Lines logged in one event-loop turn go out in
 * one write right after it (setImmediate); whatever is pending is flushed synchronously on exit.
 */
class BatchedStdout extends Writable {
  private pending: string[] = [];
  private scheduled = false;

  constructor() {
    super({ decodeStrings: false });
    process.once('exit', () => this.flush());
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.pending.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    callback();
  }

  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    process.stdout.write(text);
  }
}

let sharedStdout: BatchedStdout | undefined;

export interface LoggerOptions {
  readonly service: string;
  readonly level?: string;
  /** Defaults to stdout; tests pass a stream to read what was logged. */
  readonly stream?: NodeJS.WritableStream;
}

/** Structured JSON logs, one object a line, with the service name on every entry. */
export function createLogger(options: LoggerOptions): Logger {
  return winston.createLogger({
    level: options.level ?? 'info',
    defaultMeta: { service: options.service },
    format: winston.format.combine(
      winston.format.errors({ stack: true }),
      redactSecrets(),
      winston.format.timestamp(),
      winston.format.json(),
    ),
    transports: [new winston.transports.Stream({ stream: options.stream ?? (sharedStdout ??= new BatchedStdout()) })],
  });
}
