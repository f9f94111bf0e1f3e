-- D25: in production an operator's wallet URL may not resolve to loopback, link-local or
-- private addresses unless the operator was created or updated with
-- `--wallet-url-private-allowed true` (a test wallet on a private network).
ALTER TABLE "operators" ADD COLUMN "wallet_url_private_allowed" BOOLEAN NOT NULL DEFAULT false;
