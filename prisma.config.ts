import { defineConfig } from 'prisma/config';

// The Prisma CLI is used here only for `prisma generate`; migrations are applied by
// `rgs migrate` (src/shared/platform/db/migrate.ts) because the CLI's schema engine cannot be
// downloaded on every machine.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/rgs' },
});
