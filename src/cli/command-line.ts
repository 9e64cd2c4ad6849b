import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import { commands } from './commands.ts';

/** How a command line ends early: `message` said in one line, then `exitCode`. Never returns. */
export type Fail = (message: string, exitCode?: number) => never;

/** The one line a usage or input error is told in. */
export const failLine = (message: string): string => `petstore-load: ${message}\n`;

/**
 * One command line, from its words to its end: a command's own exit code is left in
 * `process.exitCode`; a bad input, or anything else that escapes a command, ends through `fail`
 * (main.ts: the line on stderr, then exit). Apart from the process, so that a test can run a command
 * line in its own process exactly as the CLI does.
 */
export async function commandLine(argv: string[], fail: Fail): Promise<void> {
  try {
    await commands(argv, fail).parseAsync();
  } catch (error) {
    if (error instanceof InputError) fail(error.message, error.exitCode);
    fail(`internal error: ${(error as Error).message}`, EXIT.INTERNAL);
  }
}
