import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { NonPublicAddressError, nonPublicAddress, publicOnlyLookupFor } from '../platform/address-policy.js';
import { signedHeaders } from './signer.js';

// The one outbound HTTP path of the service to an operator: a signed JSON POST (contract
// 5.1) over kept-alive connections, to public addresses only unless the operator is flagged
// (D25), with the answer read up to a cap (D24) and a timeout over the whole exchange. The
// wallet client (client.ts, contract 4.2) and the webhook deliverer (game/webhooks, D31)
// both send through it, so an operator's receivers see one kind of request.

// what signs and where it may go: the credential (kid, secret) and the D25 flag
export type OutboundTarget = { keyId: string; secret: string; privateAllowed: boolean };

export type OutboundLimits = {
  // the whole exchange, connection to the answer's last byte
  timeoutMs: number;
  // D24: an answer over this many bytes is cut off
  maxAnswerBytes: number;
};

export type SendOutcome =
  | { kind: 'response'; httpStatus: number; text: string }
  | { kind: 'oversize'; httpStatus: number; error: string }
  | { kind: 'timeout'; error: string }
  // code: the system's or TLS's error code, for a caller that reports only a category (D24)
  | { kind: 'network'; error: string; code?: string }
  // D25: an address the operator may not use; nothing was sent
  | { kind: 'refused'; error: string };

export class OutboundHttp {
  // kept-alive connections; idle ones are closed before a server with Node's default
  // keep-alive (5 s) would close them under a request
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: 256, timeout: 4000 }),
    https: new https.Agent({ keepAlive: true, maxSockets: 256, timeout: 4000 }),
  };
  // D25: in production, the connections of operators not flagged as allowed a private
  // address. The check is on the address each connection is opened to (a name repointed at
  // a private address after it was saved is refused), and these pools are their own: a
  // kept-alive connection that a flagged operator opened to a private address is never lent
  // to them.
  private readonly publicAgents: { http: http.Agent; https: https.Agent };

  // production: D25 applies; what: the setting named in a refusal ('wallet URL', 'webhook URL')
  constructor(
    private readonly production: boolean,
    private readonly what: string,
  ) {
    const lookup = publicOnlyLookupFor(what);
    this.publicAgents = {
      http: new http.Agent({ keepAlive: true, maxSockets: 256, timeout: 4000, lookup }),
      https: new https.Agent({ keepAlive: true, maxSockets: 256, timeout: 4000, lookup }),
    };
  }

  close(): void {
    for (const agents of [this.agents, this.publicAgents]) {
      agents.http.destroy();
      agents.https.destroy();
    }
  }

  // contract 4.2, 5.1: the signed path is the exact path the receiver sees, prefix included
  post(url: URL, bytes: string, target: OutboundTarget, limits: OutboundLimits): Promise<SendOutcome> {
    const secure = url.protocol === 'https:';
    const body = Buffer.from(bytes, 'utf8');
    const publicOnly = this.production && !target.privateAllowed;
    const agents = publicOnly ? this.publicAgents : this.agents;
    // a literal IP is connected to without a lookup, so it is judged here
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const literal = publicOnly && isIP(host) ? nonPublicAddress(host, [host], this.what) : undefined;
    if (literal) return Promise.resolve({ kind: 'refused', error: literal.message });
    const { timeoutMs, maxAnswerBytes } = limits;
    return new Promise<SendOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: SendOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const request = (secure ? https : http).request(
        url,
        {
          method: 'POST',
          agent: secure ? agents.https : agents.http,
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            ...signedHeaders(target.keyId, target.secret, 'POST', url.pathname, bytes),
          },
        },
        (response) => {
          const httpStatus = response.statusCode ?? 0;
          // D24: an answer over the cap is refused on its content-length, or cut off once the
          // bytes received pass the cap (a chunked or lying body); nothing past the cap is kept
          const oversize = (error: string) => {
            finish({ kind: 'oversize', httpStatus, error });
            request.destroy();
          };
          const declared = Number(response.headers['content-length']);
          if (declared > maxAnswerBytes) {
            return oversize(`answer of ${declared} bytes (content-length) over the ${maxAnswerBytes}-byte cap`);
          }
          const chunks: Buffer[] = [];
          let received = 0;
          response.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (received > maxAnswerBytes) return oversize(`answer over the ${maxAnswerBytes}-byte cap: cut off after ${received} bytes`);
            chunks.push(chunk);
          });
          response.on('end', () => finish({ kind: 'response', httpStatus, text: Buffer.concat(chunks).toString('utf8') }));
          response.on('error', (err: NodeJS.ErrnoException) => finish({ kind: 'network', error: `network error: ${err.message}`, ...(err.code ? { code: err.code } : {}) }));
        },
      );
      const timer = setTimeout(() => {
        finish({ kind: 'timeout', error: `no answer within ${timeoutMs} ms` });
        request.destroy();
      }, timeoutMs);
      request.on('error', (err: NodeJS.ErrnoException) =>
        finish(
          err instanceof NonPublicAddressError
            ? { kind: 'refused', error: err.message }
            : { kind: 'network', error: `network error: ${err.message}`, ...(err.code ? { code: err.code } : {}) },
        ),
      );
      request.end(body);
    });
  }
}
