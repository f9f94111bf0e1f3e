import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SIGNATURE_HEADERS, sign, signatureMatches } from '../../src/shared/wallet/signer.js';

// An operator's webhook endpoint as a test sees it (D31): an HTTP server that verifies every
// request as contract 5.2 tells a receiver to (the three headers, the timestamp within 30 s,
// the HMAC over the raw bytes with the operator's wallet secret, compared in constant time),
// and records what it received. It can be told to answer 500, to hang (never answer), or to
// be down (its port closed, connections refused). It counts the requests it holds open at
// once, so that a test can say how many attempts one endpoint had in flight.

export type Delivery = {
  path: string;
  keyId: string;
  // the exact bytes received, and them parsed
  body: string;
  envelope: { eventId: string; eventType: string; occurredAt: string; operatorId: string; dataVersion: number; data: unknown };
  // what the receiver answered (undefined: it hung)
  answered: number | undefined;
};

export type ReceiverMode = 'ok' | 'error' | 'hang';

export class WebhookReceiver {
  readonly deliveries: Delivery[] = [];
  // requests that failed verification, with why; a test expects none
  readonly violations: string[] = [];
  mode: ReceiverMode = 'ok';
  // requests received and not yet answered (or cut off by the sender), and the most at once
  open = 0;
  maxOpen = 0;
  // called with each verified delivery as it arrives, before it is answered
  onDelivery: ((delivery: Delivery) => void) | undefined;
  private server: http.Server;
  private readonly sockets = new Set<Socket>();
  private readonly secrets = new Map<string, string>();
  private port = 0;

  private constructor(readonly pathname: string) {
    this.server = this.create();
  }

  // `secrets`: kid -> wallet signature secret of each operator it receives for
  static async start(pathname = '/hooks/rgs'): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(pathname);
    await receiver.listen();
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}${this.pathname}`;
  }

  addCredential(kid: string, secret: string): void {
    this.secrets.set(kid, secret);
  }

  // the deliveries of one event, in the order received
  of(eventId: string): Delivery[] {
    return this.deliveries.filter((d) => d.envelope.eventId === eventId);
  }

  acknowledged(eventId: string): boolean {
    return this.of(eventId).some((d) => d.answered !== undefined && d.answered >= 200 && d.answered < 300);
  }

  // down: the port is closed and open connections are cut; up again on the same port
  async down(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // (nothing to do when it is up)
  async up(): Promise<void> {
    if (this.server.listening) return;
    this.server = this.create();
    await this.listen(this.port);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private create(): http.Server {
    const server = http.createServer((req, res) => void this.handle(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    return server;
  }

  private listen(port = 0): Promise<void> {
    return new Promise((resolve) => {
      this.server.listen(port, '127.0.0.1', () => {
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const path = (req.url ?? '').split('?')[0]!;
    const problem = this.verify(req, path, raw);
    if (problem) {
      this.violations.push(problem);
      res.writeHead(401).end();
      return;
    }
    const delivery: Delivery = {
      path,
      keyId: String(req.headers[SIGNATURE_HEADERS.keyId]),
      body: raw.toString('utf8'),
      envelope: JSON.parse(raw.toString('utf8')) as Delivery['envelope'],
      answered: undefined,
    };
    this.deliveries.push(delivery);
    this.open += 1;
    this.maxOpen = Math.max(this.maxOpen, this.open);
    res.once('close', () => (this.open -= 1));
    this.onDelivery?.(delivery);
    if (this.mode === 'hang') return;
    delivery.answered = this.mode === 'ok' ? 200 : 500;
    res.writeHead(delivery.answered, { 'content-type': 'text/plain' }).end(this.mode === 'ok' ? 'ok' : 'receiver error');
  }

  // contract 5.2, steps 1 to 5, before the body is parsed (step 6)
  private verify(req: IncomingMessage, path: string, raw: Buffer): string | undefined {
    const header = (name: string) => {
      const value = req.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const kid = header(SIGNATURE_HEADERS.keyId);
    const timestamp = header(SIGNATURE_HEADERS.timestamp);
    const signature = header(SIGNATURE_HEADERS.signature);
    if (req.method !== 'POST') return `method ${req.method}`;
    if (path !== this.pathname) return `path ${path}`;
    if (kid === undefined || timestamp === undefined || signature === undefined) return 'missing signature header(s)';
    if (!/^[0-9]+$/.test(timestamp) || Math.abs(Number(timestamp) - Date.now() / 1000) > 30) return `stale timestamp ${timestamp}`;
    const secret = this.secrets.get(kid);
    if (!secret) return `unknown kid ${kid}`;
    if (!signatureMatches(sign(secret, 'POST', path, timestamp, raw), signature)) return 'signature does not match';
    if (req.headers['content-type'] !== 'application/json') return `content-type ${req.headers['content-type']}`;
    return undefined;
  }
}
