import { EXIT } from './exit-codes.ts';

/**
 * In a child started by `spawnTied` or `forkTied` (src/cli/tied-child.ts) (any process with an IPC channel to its parent):
 * exit at once when the channel closes, i.e. when the parent is gone. 'exit' handlers still run, so
 * a child's own children are stopped as well (and they watch their own channel anyway). Without a
 * channel (started from a shell) it does nothing.
 */
export function exitWithParent(): void {
  if (!process.channel) return;
  process.once('disconnect', () => process.exit(EXIT.INTERRUPTED));
  // Listening for 'disconnect' holds the event loop open; a child with nothing left to do still ends.
  process.channel.unref();
}
