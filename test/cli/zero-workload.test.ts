import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import {
  cliWorkspace,
  outcomeContext as context,
  nonEmptyLines as lines,
  readTree,
} from '../helpers/integration-cli.ts';

/**
 * `run` with a workload of size zero, as a new user might ask for one. Apart from
 * test/cli/hostile-targets.test.ts, which runs one at a time for its bounds in seconds: these only
 * read a command line's one line, in this process (test/cli/run.test.ts ends the bin on a refusal).
 */
const TEST_TIMEOUT_MS = 30_000;

const freshDir = cliWorkspace('zero').fresh;

// Every flag and scenario field of size zero is refused by resolveWorkload (test/scenario/workload.test.ts);
// here, that the command says so in one line before it starts anything.
describe.concurrent('run with a workload of size zero', () => {
  const ZERO_SCENARIO = (workload: string) => `export default {
  name: 'zero',
  workload: ${workload},
  flows: [{ name: 'list', run: async (api: { listPets(q: object): Promise<unknown> }) => { await api.listPets({ limit: 1 }); } }],
};
`;
  it.each([
    [['--vus', '0'], /--vus is 0: a run needs at least one virtual user/],
    [['--rate', '0%'], /--rate is 0/],
    [['--duration', '0s'], /--duration is 0: a run needs a duration above 0/],
    [
      [ZERO_SCENARIO("{ executor: 'ramping-vus', stages: [{ target: 0, duration: '5s' }] }")],
      /workload\.stages is 0/,
    ],
  ])(
    '%j: one line, exit 2, nothing run or written',
    async (args, message) => {
      const out = freshDir('zero');
      const flags = [...args];
      if (flags[0]?.startsWith('export default')) {
        const file = join(freshDir('scenario'), 'zero.ts');
        writeFileSync(file, flags[0]);
        flags[0] = file;
      }
      const r = await cliInProcess(['run', ...flags, '--out', out]);
      expect(r.code, context(r)).toBe(2);
      expect(lines(r.stderr), context(r)).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
      expect(readTree(out)).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
