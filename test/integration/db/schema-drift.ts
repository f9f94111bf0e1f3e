import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

// Compares prisma/schema.prisma (through Prisma's own DMMF) with what the migrations built
// in a live Postgres database, and returns one human-readable line per disagreement (an
// empty list means no drift). Only what the schema declares is checked: objects that exist
// only in the database (partial indexes, CHECK constraints, extra tables) are allowed.

// Loaded with require(): mocha (through tsx) may run this file either as ESM or compiled to
// CommonJS, and a default import of this CommonJS package is module.exports in the first
// case but undefined in the second.
const internals = createRequire(import.meta.url)('@prisma/internals') as typeof import('@prisma/internals');

export type Dmmf = Awaited<ReturnType<typeof internals.getDMMF>>;
type Model = Dmmf['datamodel']['models'][number];
type Field = Model['fields'][number];

export const SCHEMA_PATH = fileURLToPath(new URL('../../../prisma/schema.prisma', import.meta.url));

let cachedDmmf: Promise<Dmmf> | undefined;

export function loadDmmf(schemaPath = SCHEMA_PATH): Promise<Dmmf> {
  if (schemaPath !== SCHEMA_PATH) return readFile(schemaPath, 'utf8').then((datamodel) => internals.getDMMF({ datamodel }));
  cachedDmmf ??= readFile(schemaPath, 'utf8').then((datamodel) => internals.getDMMF({ datamodel }));
  return cachedDmmf;
}

type Queryable = Pick<pg.Client, 'query'>;

type ColumnRow = {
  table_name: string;
  column_name: string;
  not_null: boolean;
  is_array: boolean;
  base_formatted: string; // format_type of the (element) type with the column's typmod
  base_typname: string;
  base_typtype: string; // 'e' for enums
  base_in_schema: boolean;
};

type IndexRow = {
  table_name: string;
  index_name: string;
  columns: (string | null)[]; // null for an expression column
  descending: boolean[];
  is_unique: boolean;
  is_primary: boolean;
  is_partial: boolean;
  method: string;
};

type ForeignKeyRow = {
  table_name: string;
  constraint_name: string;
  columns: string[];
  ref_table: string;
  ref_columns: string[];
  on_delete: string;
  on_update: string;
};

const tableName = (model: Model) => model.dbName ?? model.name;
const columnName = (field: Field) => field.dbName ?? field.name;
const list = (columns: readonly string[]) => columns.join(', ');

// pg_constraint.confdeltype / confupdtype codes
const ACTION_CODES: Record<string, string> = {
  a: 'NoAction',
  r: 'Restrict',
  c: 'Cascade',
  n: 'SetNull',
  d: 'SetDefault',
};

export async function findSchemaDrift(dmmf: Dmmf, client: Queryable): Promise<string[]> {
  const problems: string[] = [];
  const { models, enums, indexes } = dmmf.datamodel;

  const tables = new Set(
    (
      await client.query<{ table_name: string }>(
        `SELECT c.relname AS table_name
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`,
      )
    ).rows.map((row) => row.table_name),
  );

  const columnRows = (
    await client.query<ColumnRow>(
      `SELECT c.relname AS table_name,
              a.attname AS column_name,
              a.attnotnull AS not_null,
              (t.typcategory = 'A') AS is_array,
              format_type(b.oid, a.atttypmod) AS base_formatted,
              b.typname AS base_typname,
              b.typtype AS base_typtype,
              (b.typnamespace = n.oid) AS base_in_schema
         FROM pg_attribute a
         JOIN pg_class c ON c.oid = a.attrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_type t ON t.oid = a.atttypid
         JOIN pg_type b ON b.oid = CASE WHEN t.typcategory = 'A' THEN t.typelem ELSE t.oid END
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
          AND a.attnum > 0 AND NOT a.attisdropped`,
    )
  ).rows;
  const columns = new Map(columnRows.map((row) => [`${row.table_name}.${row.column_name}`, row]));

  const enumRows = (
    await client.query<{ type_name: string; labels: string[] }>(
      `SELECT t.typname AS type_name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
         FROM pg_type t
         JOIN pg_namespace n ON n.oid = t.typnamespace
         JOIN pg_enum e ON e.enumtypid = t.oid
        WHERE n.nspname = current_schema()
        GROUP BY t.typname`,
    )
  ).rows;
  const dbEnums = new Map(enumRows.map((row) => [row.type_name, row.labels]));

  const indexRows = (
    await client.query<IndexRow>(
      `SELECT c.relname AS table_name,
              ic.relname AS index_name,
              array(SELECT a.attname::text
                      FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                      LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum AND k.attnum > 0
                     WHERE k.ord <= i.indnkeyatts
                     ORDER BY k.ord) AS columns,
              array(SELECT (o.opt & 1) = 1
                      FROM unnest(i.indoption::int2[]) WITH ORDINALITY AS o(opt, ord)
                     ORDER BY o.ord) AS descending,
              i.indisunique AS is_unique,
              i.indisprimary AS is_primary,
              (i.indpred IS NOT NULL) AS is_partial,
              am.amname AS method
         FROM pg_index i
         JOIN pg_class c ON c.oid = i.indrelid
         JOIN pg_class ic ON ic.oid = i.indexrelid
         JOIN pg_am am ON am.oid = ic.relam
         JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema()`,
    )
  ).rows;

  const foreignKeyRows = (
    await client.query<ForeignKeyRow>(
      `SELECT c.relname AS table_name,
              con.conname AS constraint_name,
              array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
                     ORDER BY k.ord) AS columns,
              rc.relname AS ref_table,
              array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum
                     ORDER BY k.ord) AS ref_columns,
              con.confdeltype AS on_delete,
              con.confupdtype AS on_update
         FROM pg_constraint con
         JOIN pg_class c ON c.oid = con.conrelid
         JOIN pg_class rc ON rc.oid = con.confrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND con.contype = 'f'`,
    )
  ).rows;

  // D36: a partitioned table's partition key columns. Postgres enforces a unique rule on a
  // partitioned table only with its partition key, so there a schema key (cols) is the DB
  // key (cols, partition key); D36's decision record says how each rule holds across months.
  const partitionKeys = new Map(
    (
      await client.query<{ table_name: string; columns: string[] }>(
        `SELECT c.relname AS table_name,
                array(SELECT a.attname::text FROM unnest(p.partattrs::int2[]) WITH ORDINALITY AS k(attnum, ord)
                        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
                       ORDER BY k.ord) AS columns
           FROM pg_partitioned_table p
           JOIN pg_class c ON c.oid = p.partrelid
           JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema()`,
      )
    ).rows.map((row) => [row.table_name, row.columns]),
  );

  const enumDbName = new Map(enums.map((e) => [e.name, e.dbName ?? e.name]));
  const modelByName = new Map(models.map((m) => [m.name, m]));

  // Enums: the type exists with exactly the schema's values. Order is not compared:
  // `ALTER TYPE ... ADD VALUE` appends, and Prisma does not treat the order as drift.
  for (const e of enums) {
    const name = e.dbName ?? e.name;
    const labels = dbEnums.get(name);
    if (!labels) {
      problems.push(`enum type ${name} missing`);
      continue;
    }
    const expected = e.values.map((v) => v.dbName ?? v.name);
    for (const value of expected) if (!labels.includes(value)) problems.push(`enum ${name} lacks value ${value}`);
    for (const label of labels) if (!expected.includes(label)) problems.push(`enum ${name} has extra value ${label}`);
  }

  for (const model of models) {
    const table = tableName(model);
    if (!tables.has(table)) {
      problems.push(`table ${table} missing (model ${model.name})`);
      continue;
    }
    for (const field of model.fields) {
      if (field.kind !== 'scalar' && field.kind !== 'enum') continue;
      const column = columnName(field);
      const where = `${table}.${column}`;
      const actual = columns.get(where);
      if (!actual) {
        problems.push(`column ${where} missing`);
        continue;
      }

      if (field.isList !== actual.is_array) {
        problems.push(`column ${where} is ${actual.is_array ? 'an array' : 'not an array'} but the schema says ${field.isList ? 'a list' : 'a single value'}`);
      } else if (field.kind === 'enum') {
        const expected = enumDbName.get(field.type) ?? field.type;
        if (actual.base_typtype !== 'e' || actual.base_typname !== expected || !actual.base_in_schema) {
          problems.push(`column ${where} has type ${actual.base_formatted}, expected enum ${expected}`);
        }
      } else {
        const expected = expectedScalarType(field);
        if ('unknown' in expected) problems.push(`column ${where}: ${expected.unknown}`);
        else if (actual.base_formatted !== expected.type) {
          problems.push(`column ${where} has type ${actual.base_formatted}${actual.is_array ? '[]' : ''}, expected ${expected.type}${field.isList ? '[]' : ''}`);
        }
      }

      // Prisma emits list columns nullable (with a default), so either is accepted for them.
      if (!field.isList && field.isRequired !== actual.not_null) {
        problems.push(
          field.isRequired
            ? `column ${where} is nullable but the schema says required`
            : `column ${where} is NOT NULL but the schema says optional`,
        );
      }
    }
  }

  for (const index of indexes) {
    const model = modelByName.get(index.model);
    if (!model) {
      problems.push(`index on unknown model ${index.model}`);
      continue;
    }
    const table = tableName(model);
    if (!tables.has(table)) continue; // already reported
    const wanted = index.fields.map((f) => {
      const field = model.fields.find((candidate) => candidate.name === f.name);
      return field ? columnName(field) : f.name;
    });
    const partitionKey = (partitionKeys.get(table) ?? []).filter((column) => !wanted.includes(column));
    if (index.type !== 'normal') wanted.push(...partitionKey);
    const wantedDesc = [...index.fields.map((f) => f.sortOrder === 'desc'), ...(index.type !== 'normal' ? partitionKey.map(() => false) : [])];
    const method = (index.algorithm ?? 'BTree').toLowerCase();
    const described = `${table}(${list(wanted)})`;
    const onTable = indexRows.filter((row) => row.table_name === table);
    const sameColumns = (row: IndexRow) =>
      row.columns.length === wanted.length &&
      row.columns.every((c, i) => c === wanted[i]) &&
      row.descending.slice(0, wanted.length).every((d, i) => d === wantedDesc[i]);

    if (index.type === 'id') {
      const pk = onTable.find((row) => row.is_primary);
      if (!pk) problems.push(`primary key ${described} missing`);
      else if (!sameColumns(pk)) problems.push(`primary key of ${table} is (${list(pk.columns.map(String))}), expected (${list(wanted)})`);
      else if (index.dbName && pk.index_name !== index.dbName) problems.push(`primary key of ${table} is named ${pk.index_name}, expected ${index.dbName}`);
      continue;
    }
    if (index.type !== 'unique' && index.type !== 'normal') {
      problems.push(`${index.type} index ${described}: not supported on PostgreSQL by the drift checker`);
      continue;
    }
    // A partial or expression index does not serve the same purpose, so it does not count.
    const candidates = onTable.filter(
      (row) =>
        !row.is_partial &&
        sameColumns(row) &&
        row.method === method &&
        (index.type === 'normal' || row.is_unique) &&
        (!index.dbName || row.index_name === index.dbName),
    );
    if (candidates.length === 0) {
      problems.push(`${index.type === 'unique' ? 'unique' : 'normal'} index ${index.dbName ? `${index.dbName} ` : ''}on ${described} missing`);
    }
  }

  for (const model of models) {
    const table = tableName(model);
    if (!tables.has(table)) continue;
    for (const field of model.fields) {
      const from = field.relationFromFields ?? [];
      if (field.kind !== 'object' || from.length === 0) continue;
      const target = modelByName.get(field.type);
      if (!target) {
        problems.push(`relation ${model.name}.${field.name} targets unknown model ${field.type}`);
        continue;
      }
      const fromFields = from.map((name) => model.fields.find((f) => f.name === name));
      const fromColumns = fromFields.map((f, i) => (f ? columnName(f) : from[i]!));
      const toColumns = (field.relationToFields ?? []).map((name) => {
        const f = target.fields.find((candidate) => candidate.name === name);
        return f ? columnName(f) : name;
      });
      const targetTable = tableName(target);
      const described = `${table}(${list(fromColumns)}) -> ${targetTable}(${list(toColumns)})`;
      const fk = foreignKeyRows.find(
        (row) =>
          row.table_name === table &&
          row.ref_table === targetTable &&
          row.columns.length === fromColumns.length &&
          row.columns.every((c, i) => c === fromColumns[i]) &&
          row.ref_columns.length === toColumns.length &&
          row.ref_columns.every((c, i) => c === toColumns[i]),
      );
      if (!fk) {
        problems.push(`foreign key ${described} missing`);
        continue;
      }
      // Prisma's defaults: ON DELETE Restrict for a required relation, SetNull for an
      // optional one; ON UPDATE Cascade.
      const required = fromFields.every((f) => f?.isRequired);
      const onDelete = field.relationOnDelete ?? (required ? 'Restrict' : 'SetNull');
      const onUpdate = field.relationOnUpdate ?? 'Cascade';
      const actualDelete = ACTION_CODES[fk.on_delete] ?? fk.on_delete;
      const actualUpdate = ACTION_CODES[fk.on_update] ?? fk.on_update;
      if (actualDelete !== onDelete) problems.push(`foreign key ${described} has ON DELETE ${actualDelete}, expected ${onDelete}`);
      if (actualUpdate !== onUpdate) problems.push(`foreign key ${described} has ON UPDATE ${actualUpdate}, expected ${onUpdate}`);
    }
  }

  return problems;
}

// The element type Prisma's migration engine creates for a scalar field, spelled the way
// Postgres' format_type() prints it.
function expectedScalarType(field: Field): { type: string } | { unknown: string } {
  const [native, args = []] = field.nativeType ?? [];
  const arg = (fallback?: string) => (args.length ? `(${args.join(',')})` : fallback ?? '');
  const byType: Record<string, Record<string, () => string>> = {
    String: {
      '': () => 'text',
      Text: () => 'text',
      Uuid: () => 'uuid',
      VarChar: () => `character varying${arg()}`,
      Char: () => `character${arg('(1)')}`,
      Citext: () => 'citext',
      Xml: () => 'xml',
      Inet: () => 'inet',
      Bit: () => `bit${arg('(1)')}`,
      VarBit: () => `bit varying${arg()}`,
    },
    Int: { '': () => 'integer', Integer: () => 'integer', SmallInt: () => 'smallint', Oid: () => 'oid' },
    BigInt: { '': () => 'bigint', BigInt: () => 'bigint' },
    Float: { '': () => 'double precision', DoublePrecision: () => 'double precision', Real: () => 'real' },
    Decimal: { '': () => 'numeric(65,30)', Decimal: () => `numeric${arg()}`, Money: () => 'money' },
    Boolean: { '': () => 'boolean', Boolean: () => 'boolean' },
    DateTime: {
      '': () => 'timestamp(3) without time zone',
      Timestamp: () => `timestamp${arg()} without time zone`,
      Timestamptz: () => `timestamp${arg()} with time zone`,
      Date: () => 'date',
      Time: () => `time${arg()} without time zone`,
      Timetz: () => `time${arg()} with time zone`,
    },
    Bytes: { '': () => 'bytea', ByteA: () => 'bytea' },
    Json: { '': () => 'jsonb', JsonB: () => 'jsonb', Json: () => 'json' },
  };
  const make = byType[field.type]?.[native ?? ''];
  if (!make) {
    return { unknown: `the drift checker does not know Prisma type ${field.type}${native ? ` @db.${native}` : ''}` };
  }
  return { type: make() };
}
