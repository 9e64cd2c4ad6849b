import yargs, { type Argv } from 'yargs';
import { nearest } from '../api/nearest-name.ts';
import { TOOL_VERSION } from '../api/version.ts';
import {
  benchOptions,
  capacityOptions,
  compareOptions,
  initOptions,
  mergeOptions,
  reportOptions,
  runOptions,
  serveOptions,
  typesOptions,
} from './command-options.ts';

const EPILOGUE = `Exit codes: 0 success, 1 failed thresholds or a regression, 2 bad usage or input,
3 target or quota store unreachable (or a fleet short of a generator), 4 cannot listen, 5 a run that
completed no iteration or sent nothing, 70 internal error, 73 an output could not be written, 130 interrupted.`;

/**
 * The commands and their help, apart from the process they run in (main.ts): what `--help` says is
 * then readable in process, by the test that holds the docs to it, without a CLI start per command.
 * `fail` is how a usage error ends (main.ts: one line on stderr and exit 2). Each command's code is
 * imported when it runs: a start loads what its command needs, and `--help` only the option tables.
 */
export function commands(argv: string[], fail: (message: string) => never): Argv {
  const parser = yargs(argv);
  skipHelpOnStart(parser);
  parser
    .scriptName('petstore-load')
    // Ours, not the package.json yargs finds above the working folder (a user's project's).
    .version(TOOL_VERSION)
    .usage('$0 <command> [options]');
  testingCommands(parser);
  typedApiCommands(parser);
  knownCommand(argv, parser, fail);
  return parser
    .middleware((args) => givenOnce(args, parser, fail), true)
    .demandCommand(1, 'name a command (see --help)')
    .strict()
    .epilogue(EPILOGUE)
    .help()
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .fail((message, error) => {
      if (error && error.name !== 'YError') throw error;
      fail(message.replace(/\s*\n\s*/g, ' ').trim() || 'bad usage');
    });
}

/** The commands that test a target, and the reference server they run against. */
function testingCommands(parser: Argv): void {
  parser
    .command(
      'run [scenario]',
      'Run a scenario: plan-aware traffic across the operations, recorded into result.json',
      runOptions,
      async (args) => {
        process.exitCode = await (await import('./run.ts')).run(args);
      },
    )
    .command(
      'report <result>',
      'Render a result.json as a self-contained HTML report (works offline)',
      reportOptions,
      async (args) => {
        process.exitCode = await (await import('./report.ts')).report(args);
      },
    )
    .command(
      'compare <baseline> <current>',
      'Compare two results: deltas per operation, significance, exit 1 on a regression',
      compareOptions,
      async (args) => {
        process.exitCode = await (await import('./compare.ts')).compare(args);
      },
    )
    .command(
      'merge [files..]',
      'Merge results of several runs or workers into one (histograms added, counters summed)',
      mergeOptions,
      async (args) => {
        process.exitCode = await (await import('./merge.ts')).merge(args);
      },
    )
    .command(
      'capacity',
      'Measure each plan: accepted per window, first 429, quota return against the headers, limiter type',
      capacityOptions,
      async (args) => {
        process.exitCode = await (await import('./capacity.ts')).capacity(args);
      },
    )
    .command(
      'bench',
      'Raw-throughput benchmark with autocannon: flat out or at a fixed rate, recorded into result.json',
      benchOptions,
      async (args) => {
        process.exitCode = await (await import('./bench.ts')).bench(args);
      },
    )
    .command(
      'serve',
      'Start the reference pet store server (rate limits, deprecation, fault injection)',
      serveOptions,
      async (args) => (await import('./serve.ts')).serve(args),
    );
}

/** `init` and `types`: scenarios typed by the user's own document. */
function typedApiCommands(parser: Argv): void {
  parser
    .command(
      'init',
      'Start a typed scenario in this folder: load/NAME.ts, its types, a tsconfig.json; overwrites nothing',
      initOptions,
      async (args) => {
        process.exitCode = await (await import('./init.ts')).init(args);
      },
    )
    .command(
      'types',
      "TypeScript types of an OpenAPI document (openapi-typescript), for a scenario's typed api.call",
      typesOptions,
      async (args) => {
        process.exitCode = await (await import('./types.ts')).types(args);
      },
    );
}

/** yargs' internals this file reaches into, missing from its type declarations. */
interface YargsInternals {
  getInternalMethods?(): {
    getUsageInstance(): { cacheHelpMessage(): void };
    getCommandInstance(): { getCommands(): string[] };
  };
}

/**
 * A first word that names no command is refused with the nearest command and the list (yargs would
 * say `Unknown argument: rn`, which reads as a flag's error and names none).
 */
function knownCommand(argv: string[], parser: Argv, fail: (message: string) => never): void {
  const [first] = argv;
  if (first === undefined || first.startsWith('-')) return;
  const names = (parser as unknown as YargsInternals)
    .getInternalMethods?.()
    .getCommandInstance()
    .getCommands();
  if (!names || names.includes(first)) return;
  const near = nearest(first, names);
  const list = `${names.join(', ')} (see --help)`;
  fail(
    `unknown command ${first}${near ? `: did you mean ${near}? Commands: ${list}` : `; commands: ${list}`}`,
  );
}

/**
 * yargs renders a command's whole help as the command starts (usage.js `cacheHelpMessage`), for a
 * failure that might show it later: for `run`'s option table that is 0.15 s of CPU before the first
 * request (0.5 s on a busy machine), spent measuring strings. A failure here is told in one line,
 * never with the help (`fail` above), and `--help` renders its own; so the render is skipped.
 */
function skipHelpOnStart(parser: Argv): void {
  const usage = (parser as unknown as YargsInternals).getInternalMethods?.().getUsageInstance();
  if (usage) usage.cacheHelpMessage = () => undefined;
}

/**
 * A flag that takes one value, given twice, is refused naming both values: yargs would pass an
 * array on to code that reads one (`--rate 15 --rate 20` ended as an internal error). Repeatable
 * flags (`--threshold`, `--metrics`) are declared arrays and pass.
 */
function givenOnce(args: Record<string, unknown>, parser: Argv, fail: (message: string) => never): void {
  // getOptions is yargs' own (the current command's table), missing from its type declarations.
  const options = (
    parser as unknown as { getOptions(): { array: string[]; alias: Record<string, string[]> } }
  ).getOptions();
  const repeatable = new Set<string>();
  for (const name of options.array) {
    repeatable.add(name);
    for (const alias of options.alias[name] ?? []) repeatable.add(alias);
  }
  for (const [key, value] of Object.entries(args)) {
    if (key === '_' || !Array.isArray(value)) continue;
    const flag = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    if (repeatable.has(key) || repeatable.has(flag)) continue;
    fail(`--${flag} was given ${value.length} times (${value.join(', ')}); give it once`);
  }
}
