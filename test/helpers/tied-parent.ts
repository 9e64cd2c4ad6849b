import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnServer } from '../../src/cli/embedded-server.ts';
import { exitWithParent, forkTied } from '../../src/cli/tied-child.ts';

/**
 * A parent for test/cli/tied-child.test.ts, run as `node --import tsx tied-parent.ts MODE`:
 * `tied` starts the reference server as `run` does, `untied` with a plain spawn (the control);
 * each prints `child PID` and waits to be killed. `idle` forks a tied child that has nothing to do
 * and prints how it exited.
 */
const BIN = fileURLToPath(new URL('../../bin/petstore-load.js', import.meta.url));
const mode = process.argv[2];

if (mode === 'idle-child') {
  exitWithParent();
} else if (mode === 'idle') {
  const child = forkTied(fileURLToPath(import.meta.url), ['idle-child'], { execArgv: process.execArgv });
  const timer = setTimeout(() => console.log('idle child still running after 10 s'), 10_000);
  child.once('exit', (code) => {
    clearTimeout(timer);
    console.log(`idle child exited ${code}`);
  });
} else {
  const pid =
    mode === 'tied'
      ? (await spawnServer([])).child.pid
      : spawn(process.execPath, [BIN, 'serve', '--port', '0'], { stdio: 'ignore' }).pid;
  console.log(`child ${pid}`);
  setInterval(() => {}, 60_000);
}
