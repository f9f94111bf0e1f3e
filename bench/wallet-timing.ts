import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { epochMs } from '../src/shared/platform/clock.js';
import type { RecordedRequest } from '../src/simulator/wallet-simulator.js';

// When the wallet simulator finished answering each request. The simulator records when a
// request arrived; the answer time comes from Node's own `http.server.response.finish`
// diagnostics channel, matched to the simulator's record through the request's headers
// object, which the record keeps by reference. The time spent inside the wallet is the
// difference, configured latency included.

type FinishMessage = { request: IncomingMessage };

export class WalletAnswerTimes {
  private readonly answered = new WeakMap<IncomingHttpHeaders, number>();
  private readonly listener = (message: unknown) => {
    this.answered.set((message as FinishMessage).request.headers, epochMs());
  };

  constructor() {
    subscribe('http.server.response.finish', this.listener);
  }

  answeredAt(record: RecordedRequest): number | undefined {
    return this.answered.get(record.headers);
  }

  close(): void {
    unsubscribe('http.server.response.finish', this.listener);
  }
}
