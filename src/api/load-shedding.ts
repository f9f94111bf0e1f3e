// D37: which signed operator calls a process past its load bound refuses (503 service_busy,
// before the signature is checked) and which it still serves. It refuses the calls that
// start work, so that refusing them saves it: a session create (its wallet balance call, its
// seed, and the bets that follow it), the reports and listings (reads of many rows), a
// dispute pack (built and signed on demand) and the webhook calls that send deliveries. It
// serves the reads of one record, which cost about what their refusal does and which
// operators need most right after a restart to reconcile: a round, its proof, its replay
// URL. It also serves a session's termination: it ends play and so lessens the load, and an
// operator must be able to stop a player at any time (contract 3.3, D7).
// A signed route not named here is refused while busy: a new route starts out shed.

// METHOD and the router's path pattern (`:name` parameters)
const SERVED_WHILE_BUSY: ReadonlySet<string> = new Set([
  'GET /v1/rounds/:roundId',
  'GET /v1/rounds/:roundId/proof',
  'GET /v1/rounds/:roundId/replay-url',
  'POST /v1/session/:sessionId/terminate',
]);

// route: the signed route's path pattern, undefined for a path no route matches (refused
// while busy: answering its 404 would cost the signature check)
export function shedWhileBusy(method: string, route: string | undefined): boolean {
  if (route === undefined) return true;
  // HEAD is answered by the GET route
  const verb = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  return !SERVED_WHILE_BUSY.has(`${verb} ${route}`);
}
