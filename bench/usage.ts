import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

// CPU time and memory of a process from Linux's /proc (proc(5)): /proc/<pid>/stat for the
// user and system CPU ticks, /proc/<pid>/status for the resident set (VmRSS) and its peak
// (VmHWM, kept by the kernel, so no sampling can miss a short peak).

export type Usage = { cpuSeconds: number; rssKiB: number; peakRssKiB: number };

const CLOCK_TICKS_PER_SECOND = clockTicks();

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100; // the Linux default (USER_HZ)
  }
}

export function readUsage(pid: number): Usage {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the command name (field 2) may hold spaces and parentheses: count from the last ')'
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { cpuSeconds: ticks / CLOCK_TICKS_PER_SECOND, rssKiB: kib('VmRSS'), peakRssKiB: kib('VmHWM') };
}

// Usage of a set of named processes at one moment; phases are the differences of two.
export type Snapshot = { at: number; processes: Record<string, Usage> };

export function snapshot(pids: Record<string, number>): Snapshot {
  const processes: Record<string, Usage> = {};
  for (const [name, pid] of Object.entries(pids)) processes[name] = readUsage(pid);
  return { at: performance.now(), processes };
}

export function totalOf(snap: Snapshot, key: keyof Usage): number {
  return Object.values(snap.processes).reduce((sum, usage) => sum + usage[key], 0);
}

// The whole box between two marks: every core's busy time (/proc/stat), and the part of it
// spent by the shared servers the service talks to, summed over their processes by name
// (Postgres runs a process per connection; the pool keeps them open for the whole run).
export type BoxUsage = { at: number; busySeconds: number; byServer: Record<BoxServer, number> };
export type BoxServer = 'postgres' | 'redis';

const SERVER_COMMANDS: Record<string, BoxServer> = { postgres: 'postgres', 'redis-server': 'redis' };

export function boxUsage(): BoxUsage {
  const [cpuLine] = readFileSync('/proc/stat', 'utf8').split('\n');
  const ticks = cpuLine!.trim().split(/\s+/).slice(1).map(Number);
  // idle and iowait are not busy
  const busy = ticks.reduce((sum, value) => sum + value, 0) - ticks[3]! - (ticks[4] ?? 0);
  const byServer: Record<BoxServer, number> = { postgres: 0, redis: 0 };
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const server = SERVER_COMMANDS[stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))];
      if (!server) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byServer[server] += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
    } catch {
      // the process ended while the list was read
    }
  }
  return { at: performance.now(), busySeconds: busy / CLOCK_TICKS_PER_SECOND, byServer };
}
