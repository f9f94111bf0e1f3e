import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { round } from './stats.js';

// How late an event loop ran its callbacks while the players bet: a delay here is added to
// every message that loop handles at that moment. Node's histogram records whole intervals
// between its timer's ticks (prom-client's nodejs_eventloop_lag_* gauges report the
// same histogram, reset at every scrape); the delay is what exceeds the resolution.

export const EVENT_LOOP_RESOLUTION_MS = 10;

export type LoopDelay = { p99Ms: number; maxMs: number };

const delayMs = (intervalMs: number) => round(Math.max(0, intervalMs - EVENT_LOOP_RESOLUTION_MS));

export class LoopDelayMonitor {
  private histogram: IntervalHistogram | undefined;

  start(): void {
    this.histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
    this.histogram.enable();
  }

  // the delays since start(); none measured reads as 0
  stop(): LoopDelay {
    const histogram = this.histogram;
    if (!histogram) return { p99Ms: 0, maxMs: 0 };
    histogram.disable();
    this.histogram = undefined;
    return { p99Ms: delayMs(histogram.percentile(99) / 1e6), maxMs: delayMs(histogram.max / 1e6) };
  }
}

// The service's own loop, from its /metrics (D15), as it stood since the previous scrape.
// The api process's loop: in the all-in-one deployment, the whole service's.
export async function scrapeServiceLoopDelay(baseUrl: string): Promise<LoopDelay> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (!response.ok) throw new Error(`the service's /metrics answered ${response.status}`);
  const text = await response.text();
  const gauge = (name: string) => {
    const match = new RegExp(`^nodejs_eventloop_lag_${name}_seconds(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
    return match ? Number(match[1]) * 1000 : undefined;
  };
  const p99 = gauge('p99');
  const max = gauge('max');
  if (p99 === undefined || max === undefined) throw new Error("the service's /metrics has no event-loop lag");
  return { p99Ms: delayMs(p99), maxMs: delayMs(max) };
}
