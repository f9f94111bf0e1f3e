import { expect } from 'chai';
import { StallWatch, STRIKES } from '../../src/workers/stall-watch.js';

// P08: when a worker is replaced because it takes no job (stall-watch.ts)
describe('the stall watch of a worker', () => {
  const watch = () => new StallWatch();

  it('replaces an idle worker once a ready job is still there after the checks', () => {
    const w = watch();
    expect(w.observe(['j1'], true)).to.equal(false);
    for (let strike = 1; strike < STRIKES; strike++) expect(w.observe(['j1'], true)).to.equal(false);
    expect(w.observe(['j1'], true)).to.equal(true);
  });

  it('starts over after a replacement', () => {
    const w = watch();
    for (let check = 0; check < STRIKES; check++) w.observe(['j1'], true);
    expect(w.observe(['j1'], true)).to.equal(true);
    expect(w.observe(['j1'], true)).to.equal(false);
  });

  it('never judges a busy worker: jobs may wait behind a full pool', () => {
    const w = watch();
    for (let check = 0; check < 10; check++) expect(w.observe(['j1', 'j2'], false)).to.equal(false);
  });

  it('a queue that moves is not stalled: each check sees other jobs', () => {
    const w = watch();
    for (let check = 0; check < 10; check++) expect(w.observe([`j${check}`], true)).to.equal(false);
  });

  it('an empty queue is not stalled', () => {
    const w = watch();
    for (let check = 0; check < 10; check++) expect(w.observe([], true)).to.equal(false);
  });

  it('a job taken between two checks ends the strikes', () => {
    const w = watch();
    w.observe(['j1'], true);
    expect(w.observe(['j1'], false)).to.equal(false);
    for (let strike = 1; strike < STRIKES; strike++) expect(w.observe(['j1'], true)).to.equal(false);
  });
});
