-- D34: an API credential may be verified with the operator's public key (RS256 or EdDSA)
-- instead of an HMAC secret. Such a credential holds a PEM SPKI public key or the URL of the
-- operator's key set; nothing of it is secret, so its sealed columns stay empty (zero bytes).
ALTER TABLE "credentials" ADD COLUMN "alg" TEXT NOT NULL DEFAULT 'HS256';
ALTER TABLE "credentials" ADD COLUMN "public_key" TEXT;
ALTER TABLE "credentials" ADD COLUMN "jwks_url" TEXT;
ALTER TABLE "credentials" ADD CONSTRAINT "credentials_alg_known" CHECK ("alg" IN ('HS256', 'RS256', 'EdDSA'));
-- an HMAC credential has no public key; a public-key credential has exactly one source of keys
ALTER TABLE "credentials" ADD CONSTRAINT "credentials_key_source" CHECK (
  ("alg" = 'HS256' AND "public_key" IS NULL AND "jwks_url" IS NULL)
  OR ("alg" <> 'HS256' AND "kind" = 'API' AND (("public_key" IS NULL) <> ("jwks_url" IS NULL)))
);
-- signing_keys.public_key: the JWK "x" of an EdDSA key (as before); for an RS256 key (the
-- session-token purpose may use one) the public JWK's members {"n","e"} as JSON
