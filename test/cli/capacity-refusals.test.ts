import { describe, expect, it } from 'vitest';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { type CliOutcome, runCli } from '../helpers/integration-cli.ts';

/**
 * `capacity`'s flags refused before anything is sent. Apart from test/cli/capacity.test.ts, which
 * runs one at a time for its probes' schedule: these read a command line's first line, in this
 * process but one.
 */
const refusals: [string[], RegExp][] = [
  [['--ban-key', 'free=k'], /--ban-key is only used with --probe-ban/],
  [
    ['--probe-ban', '--base-url', 'http://127.0.0.1:9', '--api-key', 'free=k'],
    /--probe-ban needs --ban-key PLAN=KEY/,
  ],
  [
    ['--probe-ban', '--base-url', 'http://127.0.0.1:9', '--api-key', 'free=k', '--ban-key', 'pro=k'],
    /--ban-key: the pro key is also given with --api-key/,
  ],
  [['--probe-ban', '--ban-max-wait', '5'], /--ban-max-wait: '5' is not a duration/],
  [['--max-wait', 'soon'], /--max-wait: 'soon' is not a duration/],
  [
    ['--tenants', 'free=1', '--max-wait', '1m'],
    /--max-wait measures one key per plan: it does not go with --tenants/,
  ],
  // A duration with its unit, as run's --timeout: a bare number is refused, not read as ms.
  [['--timeout', '10'], /--timeout: '10' is not a duration/],
  [['--tenants', 'free=1', '--timeout', '10'], /--timeout: '10' is not a duration/],
  [['--daily', '--threshold', 'capacity.free.strikes_to_ban==6'], /strikes_to_ban needs --probe-ban/],
  // What was typed, quoted as typed: no '=' that was never there.
  [
    ['--base-url', 'http://127.0.0.1:9', '--api-key', 'pro'],
    /--api-key: expected PLAN=KEY, got 'pro' \(a plan with no '=KEY'\)\n?$/,
  ],
];

function expectRefused(outcome: CliOutcome, message: RegExp): void {
  expect(outcome.code).toBe(2);
  expect(outcome.stderr).toMatch(message);
  expect(outcome.stderr.trim().split('\n')).toHaveLength(1);
}

describe('petstore-load capacity: bad flags', () => {
  it.each(refusals)('refuses %j in one line, exit 2', async (args, message) => {
    expectRefused(await cliInProcess(['capacity', ...args]), message);
  });

  it('a refusal ends the process itself with exit 2 and that one line', async () => {
    const [args, message] = refusals.at(-1) as [string[], RegExp];
    expectRefused(await runCli(['capacity', ...args], 20_000), message);
  });
});
