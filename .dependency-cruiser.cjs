// The import rules of README "Layout", checked by `npm run depcheck` and by
// test/unit/import-rules.test.ts (so `npm test` fails when one is broken).
// Paths are relative to the repository root; bench/ and clients/ are cruised too.

const ROLES = "(api|realtime|jobs|cli)";

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
        "A role folder imports from platform, domain, wallet and game, never from another role; " +
        "only src/roles.ts puts the roles together.",
      from: { path: `^src/${ROLES}/` },
      to: { path: `^src/${ROLES}/`, pathNot: "^src/$1/" },
    },
    {
      name: "lower-layers-never-import-roles",
      severity: "error",
      comment: "platform, domain, wallet and game serve the roles and never depend on one.",
      from: { path: "^src/(platform|domain|wallet|game)/" },
      to: { path: `^src/${ROLES}/` },
    },
    {
      name: "cli-reaches-the-database-through-game-and-platform",
      severity: "error",
      comment:
        "The rgs command line parses, calls and prints (D11): every query it needs is a named " +
        "function of the game or platform module that owns the data, so it imports neither the " +
        "Prisma client nor the SQL helper.",
      from: { path: "^src/cli/" },
      to: { path: "(^src/platform/db/(sql|generated/)|(^|/)node_modules/(@prisma/|pg/|\\.prisma/))" },
    },
    {
      name: "domain-is-pure",
      severity: "error",
      comment: "src/domain is pure rules: it imports only itself and node built-ins.",
      from: { path: "^src/domain/" },
      to: { pathNot: "^src/domain/", dependencyTypesNot: ["core"] },
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
    exclude: { path: "^src/platform/db/generated/" },
    // Resolve `.js` specifiers to the `.ts` sources as tsc does (module NodeNext).
    tsConfig: { fileName: "tsconfig.json" },
    // Type-only imports are dependencies too (see no-circular).
    tsPreCompilationDeps: true,
  },
};
