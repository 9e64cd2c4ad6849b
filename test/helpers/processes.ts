import { readdirSync, readFileSync } from 'node:fs';

/**
 * Whether a process has ended: gone, or a zombie. A parent killed by SIGKILL leaves its children to
 * init, and this machine's init reaps them up to 2 s late; a zombie runs no code and holds no port.
 */
export function processEnded(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

/** Milliseconds until `pid` has ended, polled every 10 ms; undefined when it still runs after `limitMs`. */
export async function endsWithin(pid: number, limitMs: number): Promise<number | undefined> {
  const start = Date.now();
  while (Date.now() - start <= limitMs) {
    if (processEnded(pid)) return Date.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return undefined;
}

/** The pids of a process's children, from /proc (every thread's list). */
export function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    );
  } catch {
    return [];
  }
}
