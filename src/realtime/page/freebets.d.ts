// Types of freebets.js for the unit tests (the page itself is plain JavaScript, served as is).

import type { FreeBet } from '../../shared/domain/player-channel.js';
import type { MoneyFormat } from './money.js';

export type { FreeBet };
export type FreeBetRow = { grantId: string; campaign: string; stake: string; remaining: string; expires: string; expired: boolean; feature: boolean };
export type GameParams = { side?: 'LOW' | 'HIGH'; autoCashOut?: string };

export function readFreeBets(value: unknown): FreeBet[];
export function freeBetRows(grants: FreeBet[], money: MoneyFormat, options: { now: number; timeZone?: string }): FreeBetRow[];
export function freeBetPayload(
  grantId: string,
  clientBetId: string,
  params: GameParams & { amountMicro?: unknown },
): GameParams & { freeBetGrantId: string; clientBetId: string };
export function freeBetSideCaption(side: 'LOW' | 'HIGH'): string;
export function freeBetCashOutCaption(multiplier: string | null): string;
export function goneFreeBets(previous: FreeBet[], next: FreeBet[], spent: string | null): FreeBet[];
export function freeBetAnnouncement(rows: FreeBetRow[]): string;
