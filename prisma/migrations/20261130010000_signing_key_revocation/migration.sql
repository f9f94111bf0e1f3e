-- D32: a signing key can be revoked as well as retired. A retired key stays valid for what it
-- signed before its retirement; a revoked key (believed leaked) proves nothing, whatever the
-- date its signature claims, since whoever holds it can backdate. A revoked key is never the
-- current one: revoking sets retired_at too, and this constraint keeps it so.
ALTER TABLE "signing_keys" ADD COLUMN "revoked_at" TIMESTAMPTZ(3);
ALTER TABLE "signing_keys" ADD CONSTRAINT "signing_keys_revoked_is_retired" CHECK ("revoked_at" IS NULL OR "retired_at" IS NOT NULL);
