import { unzipSync, zipSync, type Zippable } from 'fflate';

// The dispute pack's archive (D32): a plain ZIP (deflate) that any unzip tool opens. fflate
// writes and reads it: pure JavaScript with no dependencies and its own types, so the
// verifier runs wherever Node runs, offline.
//
// Entries carry a fixed modification time (the earliest a ZIP can hold), so the archive's
// bytes depend on its files' bytes only; fflate writes the time in the process's local time
// zone, and a date made from local fields gives the same fields back in every zone.
const FIXED_MTIME = new Date(1980, 0, 1, 0, 0, 0);

export function zipFiles(files: { name: string; bytes: Uint8Array }[]): Buffer {
  const zippable: Zippable = {};
  for (const { name, bytes } of files) zippable[name] = [bytes, { mtime: FIXED_MTIME }];
  return Buffer.from(zipSync(zippable, { level: 6, mtime: FIXED_MTIME }));
}

// A pack holds seven small files (D32). The verifier reads archives it did not make, so the
// archive's own directory is checked against these caps before any entry is inflated: a ZIP
// can declare any number of entries and inflate far beyond its own size.
export const MAX_ENTRY_BYTES = 16 * 1024 * 1024;
export const MAX_TOTAL_BYTES = 32 * 1024 * 1024;
export const MAX_ENTRIES = 16;

export class ArchiveError extends Error {
  override name = 'ArchiveError';
}

// The archive's entries by name; ArchiveError when it is not a ZIP fflate can read, holds
// more than MAX_ENTRIES entries, declares more than MAX_ENTRY_BYTES for one or MAX_TOTAL_BYTES
// for all, or names an entry twice (D32: unzip tools differ on which copy they show, and only
// one can be the signed one).
export function unzipFiles(archive: Uint8Array): Map<string, Uint8Array> {
  try {
    // first the central directory only: fflate hands the filter each entry's name and declared
    // size, and inflates nothing the filter refuses (and an entry into a buffer of its
    // declared size, no larger)
    const names = new Set<string>();
    let total = 0;
    unzipSync(archive, {
      filter: (file) => {
        if (names.size >= MAX_ENTRIES) throw new ArchiveError(`the archive holds more than ${MAX_ENTRIES} entries`);
        if (names.has(file.name)) throw new ArchiveError(`the archive holds entry ${file.name} more than once`);
        names.add(file.name);
        if (file.originalSize > MAX_ENTRY_BYTES) throw new ArchiveError(`entry ${file.name} is larger than ${MAX_ENTRY_BYTES} bytes`);
        total += file.originalSize;
        if (total > MAX_TOTAL_BYTES) throw new ArchiveError(`the archive's entries are larger than ${MAX_TOTAL_BYTES} bytes together`);
        return false;
      },
    });
    return new Map(Object.entries(unzipSync(archive)));
  } catch (err) {
    if (err instanceof ArchiveError) throw err;
    throw new ArchiveError(`not a readable ZIP archive: ${(err as Error).message}`);
  }
}
