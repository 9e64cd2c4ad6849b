import { InputError } from '../../src/api/input-error.ts';
import { commandLine, failLine } from '../../src/cli/command-line.ts';
import type { CliOutcome } from './integration-cli.ts';

/**
 * `petstore-load ARGS` in this process, through the CLI's own command line (src/cli/command-line.ts,
 * what main.ts runs): for a command that sends nothing (a refusal, `--print-config`), which costs a
 * CLI start (~1.5 s of CPU) as a child and milliseconds here. What only the process does (the exit,
 * the bin's start) is held by each test file's spawned cases.
 *
 * stdout, stderr, `process.exitCode` and the environment are the process's own, so one command line
 * runs at a time: callers may start several, they take turns.
 */
export function cliInProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<CliOutcome> {
  const turn = queue.then(() => runOne(args, env));
  queue = turn.then(
    () => undefined,
    () => undefined,
  );
  return turn;
}

let queue: Promise<void> = Promise.resolve();

async function runOne(args: string[], env: Record<string, string | undefined>): Promise<CliOutcome> {
  let stdout = '';
  let stderr = '';
  let ended: number | undefined;
  const fail = (message: string, exitCode = 2): never => {
    // The first end is the process's: main.ts exits there, and nothing after it is said.
    if (ended === undefined) {
      ended = exitCode;
      stderr += failLine(message);
    }
    throw new InputError(message, exitCode);
  };
  const restore = swap(env, {
    out: (chunk) => {
      if (ended === undefined) stdout += String(chunk);
    },
    err: (chunk) => {
      if (ended === undefined) stderr += String(chunk);
    },
  });
  try {
    await commandLine(args, fail);
  } catch (error) {
    if (ended === undefined) throw error;
  } finally {
    const code = ended ?? (Number(process.exitCode ?? 0) || 0);
    ended ??= code;
    restore();
  }
  return { code: ended, signal: null, stdout, stderr };
}

type Sink = (chunk: unknown) => void;

/** Points stdout, stderr and the environment at this command line; the function puts them back. */
function swap(env: Record<string, string | undefined>, to: { out: Sink; err: Sink }): () => void {
  const writes = [process.stdout.write, process.stderr.write];
  const exitCode = process.exitCode;
  const vars = { NO_COLOR: '1', ...env };
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) setEnv(k, v);
  process.exitCode = undefined;
  const writer = (sink: Sink) =>
    ((chunk: unknown, ...rest: unknown[]) => {
      sink(chunk);
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = writer(to.out);
  process.stderr.write = writer(to.err);
  return () => {
    [process.stdout.write, process.stderr.write] = writes as [
      typeof process.stdout.write,
      typeof process.stderr.write,
    ];
    for (const [k, v] of Object.entries(saved)) setEnv(k, v);
    process.exitCode = exitCode;
  };
}

function setEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
