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

// an entry larger than this is refused before it is inflated (a pack's files are a few KiB)
export const MAX_ENTRY_BYTES = 16 * 1024 * 1024;

export class ArchiveError extends Error {
  override name = 'ArchiveError';
}

// The archive's entries by name; ArchiveError when it is not a ZIP fflate can read, or an
// entry is too large.
export function unzipFiles(archive: Uint8Array): Map<string, Uint8Array> {
  try {
    const entries = unzipSync(archive, {
      filter: (file) => {
        if (file.originalSize > MAX_ENTRY_BYTES) throw new ArchiveError(`entry ${file.name} is larger than ${MAX_ENTRY_BYTES} bytes`);
        return true;
      },
    });
    return new Map(Object.entries(entries));
  } catch (err) {
    if (err instanceof ArchiveError) throw err;
    throw new ArchiveError(`not a readable ZIP archive: ${(err as Error).message}`);
  }
}
