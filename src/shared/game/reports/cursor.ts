// The keyset cursor of GET /v1/rounds (D10): the position of the last round shown, its
// finishing time (settledAt or voidedAt) and id, written as base64url so that callers treat
// it as opaque. Timestamps are stored to the millisecond, so the position is exact.

export type ListingPosition = { at: Date; id: string };

const POSITION = /^(0|[1-9][0-9]{0,15})\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export const encodeCursor = (position: ListingPosition): string =>
  Buffer.from(`${position.at.getTime()}/${position.id.toLowerCase()}`, 'utf8').toString('base64url');

// undefined when the text is not a cursor this service issued
export function decodeCursor(cursor: string): ListingPosition | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const match = POSITION.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) return undefined;
  const at = new Date(Number(match[1]));
  return Number.isNaN(at.getTime()) ? undefined : { at, id: match[2]! };
}
