import { roundedPayout } from './currency.js';
import { isSide } from './dice.js';
import { MICRO, isRecord, unprovenCheck, winCallsCheck, type PackCheck, type PackFacts } from './pack-checks.js';
import { parSheet, type ParSheet } from './par-sheet.js';
import { bookedPayout, multiplierScaledOf, payout } from './payout.js';
import { verifyDiceProof } from './proof.js';

// Dice's checks of a dispute pack's content (D32), which the dice module hands the verifier
// (D39): the par sheet's return follows from its configuration (contract 8.4, D38), the proof
// reproduces the die (contract 2.11, 2.12) and is this round's, and the bet's payout follows
// from the outcome and the configuration (contract 8.4), as do the win calls.

export function dicePackChecks({ roundId, round, bet, proof, sheet, walletCalls }: PackFacts): PackCheck[] {
  const checks: PackCheck[] = [];
  const check = (name: string, ok: boolean, detail?: unknown) => checks.push(detail === undefined ? { name, ok } : { name, ok, detail });

  // the par sheet: its return follows from its configuration (contract 8.4, D38)
  const config = parSheetConfig(sheet);
  if (!config) check('par_sheet', false, 'par-sheet.json must hold gameCode, lowWeight, highWeight, payoutMultiplier, commissionMicro and rtp');
  else {
    const expected = parSheet(config);
    const ok = JSON.stringify(expected.rtp) === JSON.stringify((sheet as ParSheet).rtp);
    check('par_sheet', ok, ok ? undefined : { expected: expected.rtp, actual: (sheet as ParSheet).rtp });
  }

  // the proof: recomputed when the seed is revealed (contract 2.11)
  let outcomeSide: unknown = round.outcomeSide;
  let proven = false;
  const unproven = unprovenCheck(proof, round, round.outcomeSide !== null);
  if (unproven) checks.push(unproven);
  else {
    const verdict = verifyDiceProof(proof);
    check('proof', verdict.valid, verdict.valid ? undefined : verdict.checks.filter((c) => !c.ok));
    if (verdict.valid && isRecord(proof)) {
      const outcome = proof.outcome as Record<string, unknown>;
      const same =
        proof.roundId === roundId &&
        outcome.outcomeSide === round.outcomeSide &&
        outcome.outcomeSum === round.outcomeSum &&
        (!config || (proof.lowWeight === config.lowWeight.toString() && proof.highWeight === config.highWeight.toString()));
      check('proof_matches_round', same, same ? undefined : 'the proof\'s round, outcome or weights differ from round.json and par-sheet.json');
      outcomeSide = outcome.outcomeSide;
      proven = true;
    }
  }

  if (bet && config) checks.push(...payoutChecks(round, bet, config, outcomeSide, proven, walletCalls));
  return checks;
}

// D46: how the cycle booked a win (payoutRounding, with the round's currency); a pack made
// before the par sheet carried it was booked exact
type SheetConfig = {
  gameCode: string;
  lowWeight: bigint;
  highWeight: bigint;
  payoutMultiplierScaled: bigint;
  commissionMicro: bigint;
  payoutRounding: 'exact' | 'minor_unit';
  currency: string | undefined;
};

function parSheetConfig(sheet: unknown): SheetConfig | undefined {
  if (!isRecord(sheet) || !isRecord(sheet.rtp) || typeof sheet.gameCode !== 'string') return undefined;
  const { lowWeight, highWeight, payoutMultiplier, commissionMicro } = sheet;
  if (![lowWeight, highWeight, commissionMicro].every((v) => typeof v === 'string' && MICRO.test(v)) || typeof payoutMultiplier !== 'string') return undefined;
  const payoutMultiplierScaled = multiplierScaledOf(payoutMultiplier);
  const config = {
    gameCode: sheet.gameCode,
    lowWeight: BigInt(lowWeight as string),
    highWeight: BigInt(highWeight as string),
    payoutMultiplierScaled: payoutMultiplierScaled ?? 0n,
    commissionMicro: BigInt(commissionMicro as string),
    payoutRounding: sheet.payoutRounding === 'minor_unit' ? ('minor_unit' as const) : ('exact' as const),
    currency: typeof sheet.currency === 'string' ? sheet.currency : undefined,
  };
  const rounding = sheet.payoutRounding === undefined || sheet.payoutRounding === 'exact' || (sheet.payoutRounding === 'minor_unit' && config.currency !== undefined);
  const sane = rounding && payoutMultiplierScaled !== undefined && config.lowWeight + config.highWeight > 0n && config.commissionMicro <= 100000n;
  return sane ? config : undefined;
}

// contract 8.4: a winning bet is credited the net of its stake; a losing one nothing; a voided
// round pays nothing (its stake is refunded by the rollback). D46: the payout as the cycle's
// payoutRounding booked it. D42: a free bet (bets.json's isFree, which the free_bet check holds
// to its debit) is booked max(payout - stake, 0) of that.
function payoutChecks(
  round: Record<string, unknown>,
  bet: Record<string, unknown>,
  config: SheetConfig,
  outcomeSide: unknown,
  proven: boolean,
  walletCalls: unknown,
): PackCheck[] {
  const checks: PackCheck[] = [];
  if (typeof bet.amountMicro !== 'string' || !MICRO.test(bet.amountMicro) || !isSide(bet.side)) {
    return [{ name: 'payout', ok: false, detail: 'the bet must carry amountMicro and side' }];
  }
  if (round.state === 'VOIDED') {
    const ok = round.totalPayoutsMicro === '0';
    return [{ name: 'payout', ok, detail: ok ? 'voided: nothing paid' : { expected: '0', actual: round.totalPayoutsMicro } }];
  }
  if (!isSide(outcomeSide)) return [{ name: 'payout', ok: false, detail: 'a settled round must have an outcome side' }];
  const won = bet.side === outcomeSide;
  const stakeMicro = BigInt(bet.amountMicro);
  const expected = won
    ? bookedPayout(
        roundedPayout(payout({ stakeMicro, multiplierScaled: config.payoutMultiplierScaled, commissionMicro: config.commissionMicro }).netMicro, config.payoutRounding, config.currency ?? ''),
        stakeMicro,
        bet.isFree === true,
      ).toString()
    : '0';
  const recorded = bet.payoutMicro ?? '0';
  const ok = recorded === expected && round.totalPayoutsMicro === expected;
  checks.push({
    name: 'payout',
    ok,
    detail: {
      outcomeSide,
      outcomeProven: proven,
      won,
      expected,
      ...(ok ? {} : { betPayoutMicro: recorded, totalPayoutsMicro: round.totalPayoutsMicro }),
    },
  });
  // the win calls carried that amount (contract 2.7)
  const wins = winCallsCheck(walletCalls, won, expected);
  if (wins) checks.push(wins);
  return checks;
}
