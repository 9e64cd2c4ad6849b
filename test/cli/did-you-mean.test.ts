import { afterAll, describe, expect, it } from 'vitest';
import { builtInScenarios } from '../../src/scenario/load.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { outcomeContext as context, killAllClis, runCli } from '../helpers/integration-cli.ts';

/**
 * A misspelt command or scenario name: one line with the nearest name and the names there are,
 * exit 2 (bad input), nothing started. In this process through the CLI's command line; one case
 * starts the bin.
 */

afterAll(() => killAllClis());

const COMMANDS = 'run, report, compare, merge, capacity, bench, serve, init, types (see --help)';

describe('did you mean', () => {
  it('a misspelt command: the nearest, and the commands', async () => {
    const r = await cliInProcess(['rn', 'catalogue-browse', '--duration', '2s']);
    expect(r.code, context(r)).toBe(2);
    expect(r.stderr).toBe(`petstore-load: unknown command rn: did you mean run? Commands: ${COMMANDS}\n`);
    expect(r.stdout).toBe('');
  });

  it('a word near no command: the commands alone', async () => {
    const r = await cliInProcess(['frobnicate']);
    expect(r.code, context(r)).toBe(2);
    expect(r.stderr).toBe(`petstore-load: unknown command frobnicate; commands: ${COMMANDS}\n`);
  });

  it('a misspelt scenario: the nearest, those built in, and how one of your own is named (the bin)', async () => {
    const r = await runCli(['run', 'catalog-browse', '--duration', '2s'], 30_000);
    expect(r.code, context(r)).toBe(2);
    expect(r.stderr).toBe(
      `petstore-load: scenario 'catalog-browse': no such scenario; did you mean catalogue-browse? (built in: ${builtInScenarios().join(', ')}; one of your own is named by its path: ./load/mine.ts)\n`,
    );
    expect(builtInScenarios()).toEqual(
      expect.arrayContaining(['catalogue-browse', 'mixed-traffic', 'tenant-mix']),
    );
  }, 60_000);

  it('flags and known commands pass untouched', async () => {
    const r = await cliInProcess(['run', 'catalogue-browse', '--print-config']);
    expect(r.code, context(r)).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveProperty('scenario');
  });
});
