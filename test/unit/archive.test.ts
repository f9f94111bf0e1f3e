import { expect } from 'chai';
import { zipSync } from 'fflate';
import { ArchiveError, MAX_ENTRIES, MAX_ENTRY_BYTES, MAX_TOTAL_BYTES, unzipFiles, zipFiles } from '../../src/shared/game/evidence/archive.js';

// The dispute pack's archive (D32) as the verifier reads it: archives it did not make, so
// every entry named once and the directory's count and declared sizes capped before anything
// is inflated.

const text = (value: string) => new Uint8Array(Buffer.from(value, 'utf8'));

// a ZIP holding `round.json` twice: written under two names of the same length, the second
// renamed in its local header and in the central directory (entries stored, so the name's
// bytes appear nowhere else)
function withDuplicate(): Uint8Array {
  const archive = Buffer.from(
    zipSync({ 'round.json': [text('{"signed":true}\n'), { level: 0 }], 'round.jsoX': [text('{"signed":false}\n'), { level: 0 }] }, { level: 0 }),
  );
  let at = archive.indexOf('round.jsoX');
  expect(at).to.be.greaterThan(0);
  for (; at >= 0; at = archive.indexOf('round.jsoX')) archive.write('round.json', at, 'latin1');
  return new Uint8Array(archive);
}

const refusal = (archive: Uint8Array): string => {
  try {
    unzipFiles(archive);
  } catch (err) {
    expect(err).to.be.an.instanceOf(ArchiveError);
    return (err as Error).message;
  }
  throw new Error('the archive was read');
};

describe('the dispute pack archive, as the verifier reads it (D32)', () => {
  it('reads back what it wrote', () => {
    const files = unzipFiles(zipFiles([{ name: 'a.json', bytes: text('{}\n') }, { name: 'b.json', bytes: text('[]\n') }]));
    expect([...files.keys()]).to.deep.equal(['a.json', 'b.json']);
    expect(Buffer.from(files.get('b.json')!).toString('utf8')).to.equal('[]\n');
  });

  it('refuses an archive that holds an entry twice: only one of them can be the signed one', () => {
    expect(refusal(withDuplicate())).to.equal('the archive holds entry round.json more than once');
  });

  it(`refuses more than ${MAX_ENTRIES} entries`, () => {
    const files = Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => ({ name: `f${i}.json`, bytes: text('{}\n') }));
    expect(refusal(zipFiles(files))).to.equal(`the archive holds more than ${MAX_ENTRIES} entries`);
    expect(unzipFiles(zipFiles(files.slice(0, MAX_ENTRIES))).size).to.equal(MAX_ENTRIES);
  });

  it('refuses entries whose declared sizes add up to more than the cap, each under the per-entry cap', () => {
    const zeros = new Uint8Array(MAX_ENTRY_BYTES - 1024);
    const count = Math.floor(MAX_TOTAL_BYTES / zeros.length) + 1;
    const archive = zipFiles(Array.from({ length: count }, (_, i) => ({ name: `zeros${i}.bin`, bytes: zeros })));
    // deflated, the zeros are a few KiB: the archive is small, its entries are not
    expect(archive.length).to.be.lessThan(1024 * 1024);
    expect(refusal(archive)).to.equal(`the archive's entries are larger than ${MAX_TOTAL_BYTES} bytes together`);
  });
});
