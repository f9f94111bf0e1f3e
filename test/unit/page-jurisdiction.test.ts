import { expect } from 'chai';
import { elapsedText } from '../../src/realtime/page/play-time.js';
import { reasonText } from '../../src/realtime/page/i18n.js';

// The game page's part of a jurisdiction profile (src/realtime/page/jurisdiction.js and play-time.js, D44): the
// time played as a clock, and the refusals a profile adds, in the player's words.

describe('the game page shows a jurisdiction profile (D44)', () => {
  it('shows the time played as minutes and seconds, and hours once there are any', () => {
    expect(elapsedText(0)).to.equal('0:00');
    expect(elapsedText(999)).to.equal('0:00');
    expect(elapsedText(65_000)).to.equal('1:05');
    expect(elapsedText(59 * 60_000 + 59_999)).to.equal('59:59');
    expect(elapsedText(3_600_000)).to.equal('1:00:00');
    expect(elapsedText(3_600_000 + 2 * 60_000 + 3_000)).to.equal('1:02:03');
    expect(elapsedText(25 * 3_600_000)).to.equal('25:00:00');
    // a clock a little behind the service's never shows a negative time
    expect(elapsedText(-1_500)).to.equal('0:00');
  });

  it("says why a profile refused a bet, naming the stake's bound when the page has it", () => {
    expect(reasonText('reality_check_due')).to.equal('Time for a reality check: confirm that you want to keep playing before your next bet.');
    expect(reasonText('stake_above_jurisdiction_max', { jurisdictionMax: '€1.00' })).to.equal('This bet costs more than €1.00, the most one bet may cost where you play (a bought feature counts its whole price).');
    expect(reasonText('stake_above_jurisdiction_max')).to.equal('This bet costs more than one bet may cost where you play (a bought feature counts its whole price).');
    expect(reasonText('round_too_soon')).to.equal('Too soon after your last play. Wait a moment, then play again.');
  });
});
