// D24, D31: why a webhook attempt was not acknowledged, as the operator reads it (`lastError`
// of GET /v1/webhooks/deliveries). Only a category: never an address, a name's resolution, a
// port or a raw error message, or an operator could point its URL at any host and read back
// what the service's network can resolve and reach (a DNS and port oracle). The service's own
// log keeps the detail. Pure.

export type WebhookFailure =
  | 'timeout'
  | 'dns_failed'
  | 'connect_failed'
  | 'connection_lost'
  | 'tls_failed'
  | 'network_error'
  | 'address_refused'
  | 'credential_unavailable'
  | 'http_4xx'
  | 'http_5xx'
  | `http_status:${number}`;

// what the outbound path reported (wallet/outbound.ts), or that the attempt could not be signed
export type AttemptResult =
  | { kind: 'response' | 'oversize'; httpStatus: number }
  | { kind: 'timeout' }
  | { kind: 'network'; code?: string | undefined }
  | { kind: 'refused' }
  | { kind: 'unsigned' };

const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
const CONNECT = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'ETIMEDOUT', 'EADDRNOTAVAIL']);
const LOST = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
// OpenSSL's certificate verdicts, and Node's own TLS and SSL codes
const TLS = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_|EPROTO$|HOSTNAME_MISMATCH$)/;

export function httpFailure(status: number): WebhookFailure {
  if (status >= 400 && status <= 499) return 'http_4xx';
  if (status >= 500 && status <= 599) return 'http_5xx';
  return `http_status:${status}`;
}

export function webhookFailure(result: AttemptResult): WebhookFailure {
  switch (result.kind) {
    case 'response':
    case 'oversize':
      // the body is ignored (D31), so an oversized one is judged on its status too
      return httpFailure(result.httpStatus);
    case 'timeout':
      return 'timeout';
    case 'refused':
      return 'address_refused';
    case 'unsigned':
      return 'credential_unavailable';
    case 'network': {
      const code = result.code ?? '';
      if (DNS.has(code)) return 'dns_failed';
      if (CONNECT.has(code)) return 'connect_failed';
      if (LOST.has(code)) return 'connection_lost';
      if (TLS.test(code)) return 'tls_failed';
      return 'network_error';
    }
  }
}

const CATEGORY = /^(timeout|dns_failed|connect_failed|connection_lost|tls_failed|network_error|address_refused|credential_unavailable|http_4xx|http_5xx|http_status:[0-9]{1,3})$/;

// A stored lastError as the operator may read it. Rows written before categories were stored
// hold the raw message; they are read as the category it names, and never shown as written.
export function publicWebhookFailure(stored: string | null): string | null {
  if (stored === null || CATEGORY.test(stored)) return stored;
  const http = /^HTTP ([0-9]{3})$/.exec(stored);
  if (http) return httpFailure(Number(http[1]));
  if (stored.startsWith('no answer within')) return 'timeout';
  if (/\b(ENOTFOUND|EAI_[A-Z]+)\b/.test(stored)) return 'dns_failed';
  if (/\b(ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT)\b/.test(stored)) return 'connect_failed';
  if (/not a public address/.test(stored)) return 'address_refused';
  if (/credential/i.test(stored)) return 'credential_unavailable';
  return 'network_error';
}
