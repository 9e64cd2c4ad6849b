import {
  type ChildProcess,
  type ForkOptions,
  fork,
  type SpawnOptions,
  type StdioOptions,
  spawn,
} from 'node:child_process';

// The child's side lives in src/api, where the embedded server's process and bench children reach it.
export { exitWithParent } from '../api/exit-with-parent.ts';

/**
 * Every process the toolkit starts dies with the process that started it, however that one ends:
 * a SIGKILL (the OOM killer, a CI runner's cancel) runs no handler, so no parent can stop its
 * children then. The kernel closes a dead process's pipes, though: each child gets an IPC channel
 * and calls `exitWithParent`, which ends it when the channel closes. A child that is not Node (nginx,
 * redis-server) cannot watch one, and is not started this way.
 */
export function spawnTied(
  command: string,
  args: readonly string[],
  options: SpawnOptions & { stdio: [StdioOptions, StdioOptions, StdioOptions] },
): ChildProcess {
  const child = spawn(command, args, { ...options, stdio: [...options.stdio, 'ipc'] as StdioOptions });
  release(child);
  return child;
}

/** `fork` with the same tie: a Node script of ours, which calls `exitWithParent` at its start. */
export function forkTied(script: string, args: readonly string[], options: ForkOptions = {}): ChildProcess {
  const child = fork(script, args, options);
  release(child);
  return child;
}

/** The channel must never keep the parent alive: a parent that ends without stopping its child is a bug, not a hang. */
function release(child: ChildProcess): void {
  child.channel?.unref();
}
