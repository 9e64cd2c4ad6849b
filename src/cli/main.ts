import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import { bench, benchOptions } from './bench.ts';
import { capacity, capacityOptions } from './capacity.ts';
import { compare, compareOptions } from './compare.ts';
import { merge, mergeOptions } from './merge.ts';
import { report, reportOptions } from './report.ts';
import { run, runOptions } from './run.ts';
import { serve, serveOptions } from './serve.ts';
import { exitWithParent } from './tied-child.ts';

const EPILOGUE = `Exit codes: 0 success, 1 failed thresholds or a regression, 2 bad usage or input,
3 target or quota store unreachable, 4 cannot listen, 70 internal error, 73 an output could not
be written, 130 interrupted.`;

/** Usage errors are one line on stderr and exit 2: pipelines read the code, people read the line. */
function fail(message: string, exitCode: number = EXIT.USAGE): never {
  process.stderr.write(`petstore-load: ${message}\n`);
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

try {
  await yargs(hideBin(process.argv))
    .scriptName('petstore-load')
    .usage('$0 <command> [options]')
    .command(
      'run [scenario]',
      'Run a scenario: plan-aware traffic across the operations, recorded into result.json',
      runOptions,
      async (args) => {
        process.exitCode = await run(args);
      },
    )
    .command(
      'report <result>',
      'Render a result.json as a self-contained HTML report (works offline)',
      reportOptions,
      async (args) => {
        process.exitCode = await report(args);
      },
    )
    .command(
      'compare <baseline> <current>',
      'Compare two results: deltas per operation, significance, exit 1 on a regression',
      compareOptions,
      async (args) => {
        process.exitCode = await compare(args);
      },
    )
    .command(
      'merge <files..>',
      'Merge results of several runs or workers into one (histograms added, counters summed)',
      mergeOptions,
      async (args) => {
        process.exitCode = await merge(args);
      },
    )
    .command(
      'capacity',
      'Measure each plan: accepted per window, first 429, quota return against the headers, limiter type',
      capacityOptions,
      async (args) => {
        process.exitCode = await capacity(args);
      },
    )
    .command(
      'bench',
      'Raw-throughput benchmark with autocannon: flat out or at a fixed rate, recorded into result.json',
      benchOptions,
      async (args) => {
        process.exitCode = await bench(args);
      },
    )
    .command(
      'serve',
      'Start the reference pet store server (rate limits, deprecation, fault injection)',
      serveOptions,
      serve,
    )
    .demandCommand(1, 'name a command (see --help)')
    .strict()
    .epilogue(EPILOGUE)
    .help()
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .fail((message, error) => {
      if (error && error.name !== 'YError') throw error;
      fail(message.replace(/\s*\n\s*/g, ' ').trim() || 'bad usage');
    })
    .parseAsync();
} catch (error) {
  if (error instanceof InputError) fail(error.message, error.exitCode);
  fail(`internal error: ${(error as Error).message}`, EXIT.INTERNAL);
}
