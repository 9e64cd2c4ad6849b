import type { Argv } from 'yargs';
import { BENCH_FLAGS } from '../config/bench-flags.ts';
import { CAPACITY_FLAGS } from '../config/capacity-flags.ts';
import { MAX_REGRESSION_DESCRIPTION, RUN_FLAGS, RUN_SCENARIO } from '../config/run-flags.ts';
import { SERVE_FLAGS } from '../config/serve-flags.ts';
import { INIT_FLAGS, TYPES_FLAGS } from '../config/types-flags.ts';

/**
 * Each command's options, apart from the code that runs it: parsing a command line, or printing
 * `--help`, loads these tables and nothing a command does (the embedded server a run starts loads
 * the server, not the load generator).
 */

/** Options of `run [scenario]`. */
export function runOptions(yargs: Argv) {
  return yargs.positional('scenario', RUN_SCENARIO).options(RUN_FLAGS);
}

/** Options of `report <result>`. */
export function reportOptions(yargs: Argv) {
  return yargs
    .positional('result', {
      type: 'string',
      demandOption: true,
      describe: 'A result.json written by `run`',
    })
    .option('out', {
      alias: 'o',
      type: 'string',
      describe: 'HTML file to write (default: report.html beside the result)',
    })
    .requiresArg(['out']);
}

/** Options of `compare <baseline> <current>` (the command string must name both positionals). */
export function compareOptions(yargs: Argv) {
  return yargs
    .positional('baseline', {
      type: 'string',
      demandOption: true,
      describe: 'Result file of the baseline run',
    })
    .positional('current', {
      type: 'string',
      demandOption: true,
      describe: 'Result file of the run to judge',
    })
    .option('max-regression', { type: 'string', describe: MAX_REGRESSION_DESCRIPTION })
    .requiresArg(['max-regression']);
}

/** Options of `merge <files..>` (the command string must name the positional `files`). */
export function mergeOptions(yargs: Argv) {
  return yargs
    .positional('files', {
      type: 'string',
      array: true,
      describe: 'Result files (result.json) of the runs or workers to merge',
    })
    .option('out', {
      alias: 'o',
      type: 'string',
      demandOption: true,
      describe:
        'File to write the merged result to (with --fleet: a directory, for result.json and report.html)',
    })
    .option('fleet', {
      type: 'string',
      describe:
        "A fleet's result from its store, e.g. redis://HOST:6379/nightly-42 or redis+sentinel://S1:26379,S2:26379/main/nightly-42",
    })
    .requiresArg(['out', 'fleet']);
}

/** Options of `capacity`. */
export function capacityOptions(yargs: Argv) {
  return yargs.options(CAPACITY_FLAGS);
}

/** Options of `bench`. */
export function benchOptions(yargs: Argv) {
  return yargs.options(BENCH_FLAGS);
}

/** Options of `serve`: flag names as typed (`--fault-latency`, not also `faultLatency`). */
export function serveOptions(yargs: Argv) {
  return yargs.parserConfiguration({ 'strip-dashed': false }).options(SERVE_FLAGS);
}

/** Options of `types`. */
export function typesOptions(yargs: Argv) {
  return yargs.options(TYPES_FLAGS);
}

/** Options of `init`. */
export function initOptions(yargs: Argv) {
  return yargs.options(INIT_FLAGS);
}
