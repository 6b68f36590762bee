// What the benchmarks read of the workerd processes Miniflare starts (Linux /proc): which ones this script started,
// their CPU time and their memory. Shared by bench:cpu, bench:auth and bench:live.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The workerd processes this script started (Miniflare runs one per instance). */
export function workerdChildren() {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const [, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(ppid) === process.pid && stat.includes('(workerd)');
      } catch {
        return false; // exited meanwhile
      }
    })
    .map(Number);
}

const TICK_MICROS = 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** User + system CPU time of process `pid` so far, in µs (all its threads). */
export function cpuMicros(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MICROS; // utime, stime (fields 14 and 15 of stat)
}

/** A memory figure of process `pid` in KiB: `VmRSS` (now) or `VmHWM` (its peak). */
export const memoryKiB = (pid, field) =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

/**
 * CPU time of process `pid` so far, in ns, summed over its threads: the scheduler's own account
 * (`/proc/<pid>/task/<tid>/schedstat`, time on a core), exact where `stat`'s user and system times are counted in
 * clock ticks. A thread that ended since is no longer counted (workerd's threads live as long as the process).
 */
export function cpuNanos(pid) {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return total;
}
