// The import rules of docs/architecture.md "Layout" (P14), checked by `npm run depcheck` and by
// test/unit/import-rules.test.ts (so `npm test` fails when one is broken).
// Paths are relative to the repository root; bench/ and clients/ are cruised too.

// The roles (D12): each a folder that a process runs, or the rgs command line; the wallet
// simulator is the sandbox's own program (D35), a role of its own for these rules.
const ROLES = "(api|realtime|workers|cli|simulator)";
// The process wiring: the entry points and what builds a process from roles (main.ts,
// roles.ts, bootstrap.ts, demo.ts, sandbox.ts), the files directly under src/.
const WIRING = "^src/[^/]+$";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "No import cycles, type-only imports included: a cycle of types is still two files a " +
        "reader must hold at once, and a type import becomes a value import with one edit.",
      from: { path: "^(src|bench|clients)/" },
      to: { circular: true },
    },
    {
      name: "roles-never-import-roles",
      severity: "error",
      comment:
        "A role folder imports from src/shared, never from another role; only the process " +
        "wiring (src/roles.ts) puts the roles together.",
      from: { path: `^src/${ROLES}/` },
      to: { path: `^src/${ROLES}/`, pathNot: "^src/$1/" },
    },
    {
      name: "roles-never-import-the-wiring",
      severity: "error",
      comment:
        "The wiring builds processes out of roles; a role that imported it would import every " +
        "other role with it.",
      from: { path: `^src/${ROLES}/` },
      to: { path: WIRING },
    },
    {
      name: "shared-never-imports-roles-or-wiring",
      severity: "error",
      comment:
        "src/shared serves the roles and the wiring and depends on neither: everything it " +
        "imports is in src/shared itself (or a package).",
      from: { path: "^src/shared/" },
      to: { path: "^src/", pathNot: "^src/shared/" },
    },
    {
      name: "domain-is-pure",
      severity: "error",
      comment: "src/shared/domain is pure rules, the lowest layer: it imports only itself and node built-ins.",
      from: { path: "^src/shared/domain/" },
      to: { pathNot: "^src/shared/domain/", dependencyTypesNot: ["core"] },
    },
    {
      name: "platform-is-below-wallet-and-game",
      severity: "error",
      comment:
        "Layer order domain <- platform <- wallet <- game: platform (config, database, Redis, " +
        "queues, logging) imports domain and itself, never the layers above it.",
      from: { path: "^src/shared/platform/" },
      to: { path: "^src/shared/(wallet|game)/" },
    },
    {
      name: "wallet-is-below-game",
      severity: "error",
      comment:
        "Layer order domain <- platform <- wallet <- game: the wallet call (audit, signer, " +
        "circuit, request bodies) imports domain, platform and itself, never the game layer.",
      from: { path: "^src/shared/wallet/" },
      to: { path: "^src/shared/game/" },
    },
    {
      name: "cli-reaches-the-database-through-game-and-platform",
      severity: "error",
      comment:
        "The rgs command line parses, calls and prints (D11): every query it needs is a named " +
        "function of the game or platform module that owns the data, so it imports neither the " +
        "Prisma client nor the SQL helper.",
      from: { path: "^src/cli/" },
      to: { path: "(^src/shared/platform/db/(sql|generated/)|(^|/)node_modules/(@prisma/|pg/|\\.prisma/))" },
    },
    {
      name: "domain-is-pure",
      severity: "error",
      comment: "src/shared/domain is pure rules: it imports only itself and node built-ins.",
      from: { path: "^src/shared/domain/" },
      to: { pathNot: "^src/shared/domain/", dependencyTypesNot: ["core"] },
    },
    {
      name: "clients-stand-alone",
      severity: "error",
      comment:
        "A client package under clients/ is installed on its own by operators (docs/clients.md): " +
        "it imports only itself, its npm dependencies and built-ins, never the service's code.",
      from: { path: "^clients/([^/]+)/" },
      to: { path: "^(?!clients/$1/)", dependencyTypesNot: ["core", "npm", "npm-dev", "npm-no-pkg", "npm-unknown"] },
    },
    {
      name: "resolvable",
      severity: "error",
      comment:
        "Every import resolves to a file; an import the check cannot resolve would hide a " +
        "cycle or a broken rule from the other rules.",
      from: { path: "^(src|bench|clients)/" },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // the Prisma client is generated (npm run generate), not ours to arrange
    exclude: { path: "^src/shared/platform/db/generated/" },
    // Resolve `.js` specifiers to the `.ts` sources as tsc does (module NodeNext).
    tsConfig: { fileName: "tsconfig.json" },
    // Type-only imports are dependencies too (see no-circular).
    tsPreCompilationDeps: true,
  },
};
