import type { IncomingHttpHeaders } from 'node:http';
import type { WalletEndpoint } from './ledger.js';

// The wallet simulator's memory of the requests it received (D24, D35). The sandbox
// (`npm run sandbox`) is a long-lived process that anyone who can reach its port may send
// requests to, signed or not, of up to 1 MiB each: what it keeps of them is bounded, so
// that no caller can grow it without end. The log holds at most maxEntries requests and
// maxBytes of them, the oldest dropped first; of a request whose signature did not verify
// it keeps only the first unauthenticatedBodyBytes of the body (the parsed body only when
// the whole of it was kept). Findings (violations) are bounded the same way.

export type SentResponse = {
  httpStatus: number;
  status?: string; // the RS_ status of a JSON body; absent for a plain or non-JSON body
  body: string; // at most its first KiB; for an endless or trickled answer, of what was written before the connection closed
  bytesSent?: number; // an endless or trickled answer: the body bytes written before the connection closed
};

export type RecordedRequest = {
  receivedAt: Date;
  method: string;
  path: string; // as seen by the server, without the query string
  endpoint: WalletEndpoint | null; // null for a path that is not a wallet endpoint
  headers: IncomingHttpHeaders;
  // the body as received; of a request whose signature did not verify, only its first
  // unauthenticatedBodyBytes (RequestLogLimits)
  rawBody: string;
  bodyBytes: number; // the size of the body received, whatever was kept of it
  body: unknown; // the parsed JSON of rawBody, undefined when it is not JSON (or was cut)
  signatureValid: boolean;
  // 'pending' while a delayed answer waits; 'no_response' when nothing was (or will be) sent
  response: SentResponse | 'pending' | 'no_response';
};

export type RequestLogLimits = {
  maxEntries: number;
  maxBytes: number;
  unauthenticatedBodyBytes: number;
};

export const REQUEST_LOG_LIMITS: RequestLogLimits = {
  maxEntries: 10_000,
  maxBytes: 16 * 1024 * 1024,
  unauthenticatedBodyBytes: 1024,
};

// what an answer's body is kept to in the log (an oversize fault's answer may be far larger)
export const KEPT_ANSWER_BYTES = 1024;
// a finding's text is kept to this many characters (a path or a key id in it comes from the caller)
export const KEPT_FINDING_CHARS = 512;

// What one entry is counted as: its body twice (the text and its parsed form), its path and
// headers, and the most its kept answer can be.
export function entrySize(record: RecordedRequest): number {
  let size = 2 * Buffer.byteLength(record.rawBody) + Buffer.byteLength(record.path) + record.method.length + KEPT_ANSWER_BYTES;
  for (const [name, value] of Object.entries(record.headers)) {
    size += name.length + (Array.isArray(value) ? value.reduce((sum, item) => sum + Buffer.byteLength(item), 0) : Buffer.byteLength(value ?? ''));
  }
  return size;
}

export class RequestLog {
  private readonly kept: RecordedRequest[] = [];
  private readonly sizes: number[] = [];
  private keptBytes = 0;
  private receivedCount = 0;
  private droppedCount = 0;

  constructor(readonly limits: RequestLogLimits) {}

  // oldest first
  get entries(): readonly RecordedRequest[] {
    return this.kept;
  }

  get bytes(): number {
    return this.keptBytes;
  }

  // every request since the last clear, kept or not
  get received(): number {
    return this.receivedCount;
  }

  get dropped(): number {
    return this.droppedCount;
  }

  add(record: RecordedRequest): void {
    const size = entrySize(record);
    this.receivedCount += 1;
    this.kept.push(record);
    this.sizes.push(size);
    this.keptBytes += size;
    while (this.kept.length > this.limits.maxEntries || this.keptBytes > this.limits.maxBytes) {
      this.kept.shift();
      this.keptBytes -= this.sizes.shift()!;
      this.droppedCount += 1;
    }
  }

  clear(): void {
    this.kept.length = 0;
    this.sizes.length = 0;
    this.keptBytes = 0;
    this.receivedCount = 0;
    this.droppedCount = 0;
  }
}

// A list of findings holding the latest maxEntries, each cut to KEPT_FINDING_CHARS.
export function addFinding(findings: string[], text: string, maxEntries: number): void {
  findings.push(text.length > KEPT_FINDING_CHARS ? `${text.slice(0, KEPT_FINDING_CHARS)}…` : text);
  if (findings.length > maxEntries) findings.splice(0, findings.length - maxEntries);
}
