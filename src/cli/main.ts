import { hideBin } from 'yargs/helpers';
import { EXIT } from '../api/exit-codes.ts';
import { commandLine, failLine } from './command-line.ts';
import { exitWithParent } from './tied-child.ts';

/** Usage errors are one line on stderr and exit 2: pipelines read the code, people read the line. */
function fail(message: string, exitCode: number = EXIT.USAGE): never {
  process.stderr.write(failLine(message));
  process.exit(exitCode);
}

// Started by another of our processes (the embedded server, a test's CLI): end when it does.
exitWithParent();

// A reader that goes away (`serve | head -1`) must not turn into a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

await commandLine(hideBin(process.argv), fail);
