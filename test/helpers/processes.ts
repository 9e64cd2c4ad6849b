import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';

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

/** Whether something accepts a TCP connection on loopback's `port`: how a daemon that says nothing is ready. */
export function acceptsOnLoopback(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Ends a child started by a test (SIGTERM) and waits for it; one already ended is left as it is. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}
