import dns from 'node:dns';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

// D25: what an operator's settings may point at. A wallet URL (and a webhook URL, D31, under
// the same rules) is called by the service from inside its own network, so in production it
// must not reach that network (loopback, cloud metadata, private ranges) unless the operator
// is explicitly flagged; a frame-ancestors entry
// goes into the launch page's CSP (D16), so it must be one origin, never "anyone".

// a host label (RFC 1123), and an origin: scheme://host[:port], `*.` only as the left-most
// label and followed by at least two labels (`https://*.com` would be every .com site)
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const FRAME_ANCESTOR = new RegExp(`^https?://(?:\\*\\.${LABEL}\\.${LABEL}(?:\\.${LABEL})*|${LABEL}(?:\\.${LABEL})*)(?::([0-9]{1,5}))?$`);

export function frameAncestorProblem(entry: string): string | undefined {
  const match = FRAME_ANCESTOR.exec(entry);
  const port = match?.[1] === undefined ? undefined : Number(match[1]);
  if (!match || (port !== undefined && (port < 1 || port > 65535))) {
    return `frame ancestor must be an origin such as https://casino.example or https://*.casino.example, never a bare * or scheme: ${entry}`;
  }
  return undefined;
}

// Every environment: an http(s) URL without query or fragment, and without credentials
// (node's http.request would send user:pass@ as Basic auth, and `operator show` prints the
// URL back; our calls are authenticated by the signature, contract 5.1).
// `what` names the setting in the refusal: 'wallet URL', or 'webhook URL' (D31).
export function walletUrlFormatProblem(raw: string, what = 'wallet URL'): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${what} must be an http(s) URL without query or fragment: ${raw}`;
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash) {
    return `${what} must be an http(s) URL without query or fragment: ${raw}`;
  }
  if (url.username || url.password) return `${what} must not carry credentials (user:password@)`;
  return undefined;
}

// ipaddr.js names every special-purpose range; only plain 'unicast' is public. IPv4-mapped
// IPv6 is judged as the IPv4 address it carries.
export function nonPublicRange(address: string): string | undefined {
  const range = ipaddr.process(address).range();
  return range === 'unicast' ? undefined : range;
}

// Production only: https:, and unless privateAllowed, every address the host resolves to
// (as the wallet client's connection will resolve it) is public.
// `flag`: the option that allows a private address ('--wallet-url-private-allowed').
export async function walletUrlProductionProblem(
  raw: string,
  privateAllowed: boolean,
  what = 'wallet URL',
  flag = '--wallet-url-private-allowed',
): Promise<string | undefined> {
  const url = new URL(raw);
  if (url.protocol !== 'https:') return `${what} must be https: in production: ${raw}`;
  if (privateAllowed) return undefined;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  try {
    // getaddrinfo, as the wallet client's connections resolve it (hosts file included)
    addresses = (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch (err) {
    return `${what} host ${host} does not resolve (${(err as { code?: string }).code ?? 'error'}); its addresses cannot be checked`;
  }
  const refused = nonPublicAddress(host, addresses, what);
  return refused && `${refused.message}; a test ${what === 'wallet URL' ? 'wallet' : 'receiver'} on a private network needs ${flag} true`;
}

// An address a production wallet call may not go to (the rule above, applied to the address
// a connection is about to use: a name may be repointed after the URL was saved).
export class NonPublicAddressError extends Error {
  override name = 'NonPublicAddressError';
  readonly code = 'ERR_NON_PUBLIC_ADDRESS';
}

// the refusal of the first non-public address among those a host has (a literal IP host is
// its own only address)
export function nonPublicAddress(host: string, addresses: string[], what = 'wallet URL'): NonPublicAddressError | undefined {
  for (const address of addresses) {
    const range = nonPublicRange(address);
    if (range) return new NonPublicAddressError(`${what} host ${host} resolves to ${address} (${range}), not a public address`);
  }
  return undefined;
}

// dns.lookup for a connection (http.Agent's `lookup`) that only ever hands out public
// addresses: a name with any non-public address fails the connection before it is made,
// as the same name is refused when saved. `what` names the setting in the refusal.
export const publicOnlyLookupFor = (what: string): LookupFunction => (host, options, callback) => {
  dns.lookup(host, { ...options, all: true }, (err, entries) => {
    if (err) return callback(err, '', undefined);
    const refused = nonPublicAddress(host, entries.map((entry) => entry.address), what);
    if (refused) return callback(refused, '', undefined);
    if (options.all) return callback(null, entries);
    const [first] = entries;
    if (!first) return callback(Object.assign(new Error(`no address for ${host}`), { code: 'ENOTFOUND' }), '', undefined);
    callback(null, first.address, first.family);
  });
};

export const publicOnlyLookup: LookupFunction = publicOnlyLookupFor('wallet URL');
