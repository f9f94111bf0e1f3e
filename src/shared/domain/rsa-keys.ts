// D34, D24: which RSA public keys an RS256 credential may verify with, whatever brought the
// key (a PEM at `rgs credential add`, a key of a JWKS fetched later). The cost of an RSA
// verification grows with the public exponent and with the square of the modulus; an
// operator's key is untrusted input, and a key of a huge exponent (e close to n) makes every
// verification as dear as a private-key operation, on the event loop every tenant shares.
// So the exponent is the one every RSA implementation uses, 65537 (RFC 8017 leaves it open;
// NIST SP 800-56B fixes 65537 as the minimum, and no library makes another by default), and
// the modulus is from 2048 bits (RFC 7518 3.3) to 4096 bits (more buys no security an
// operator needs and costs four times as much per signature).

export const RSA_PUBLIC_EXPONENT = 65537n;
export const RSA_MIN_BITS = 2048;
export const RSA_MAX_BITS = 4096;

export const RSA_KEY_RULE = `RSA keys must have the public exponent ${RSA_PUBLIC_EXPONENT} and a modulus of ${RSA_MIN_BITS} to ${RSA_MAX_BITS} bits`;

// What is wrong with an RSA public key of these details (node's KeyObject.asymmetricKeyDetails),
// or undefined when it is usable
export function rsaKeyProblem(details: { modulusLength?: number; publicExponent?: bigint } | undefined): string | undefined {
  const bits = details?.modulusLength;
  if (bits === undefined || bits < RSA_MIN_BITS) return `an RS256 public key must have at least ${RSA_MIN_BITS} bits`;
  if (bits > RSA_MAX_BITS) return `an RS256 public key may have at most ${RSA_MAX_BITS} bits`;
  if (details?.publicExponent !== RSA_PUBLIC_EXPONENT) return `an RS256 public key must have the public exponent ${RSA_PUBLIC_EXPONENT} (e = AQAB)`;
  return undefined;
}
