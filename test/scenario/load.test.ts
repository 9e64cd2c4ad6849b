import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import {
  builtInScenarios,
  loadScenario,
  SCENARIOS_DIR,
  scenarioPath,
  validateScenario,
} from '../../src/scenario/load.ts';
import { resolveWorkload } from '../../src/scenario/workload.ts';

const SIX = [
  'catalogue-browse',
  'deprecated-endpoint',
  'mixed-traffic',
  'over-quota-burst',
  'shopper-checkout',
  'store-admin',
];

const dir = mkdtempSync(join(tmpdir(), 'petstore-load-scenarios-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** Writes a scenario module to a new temp .ts file and returns its path. */
function scenarioFile(source: string): string {
  const path = join(dir, `scenario-${++files}.ts`);
  writeFileSync(path, source);
  return path;
}

const run = 'async () => {}';
const flow = (name: string, extra = '') => `{ name: '${name}', run: ${run}${extra} }`;
const module = (body: string) =>
  `export default { name: 'tmp', workload: { executor: 'constant-vus', vus: 1 }, ${body} };\n`;

/** The InputError message of a rejected promise or throwing function; it must be one line. */
async function inputError(fn: () => unknown): Promise<string> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    const message = (error as InputError).message;
    expect(message).not.toContain('\n');
    expect((error as InputError).exitCode).toBe(2);
    return message;
  }
  throw new Error('expected an InputError, nothing was thrown');
}

describe('scenarioPath', () => {
  it('maps a bare name to scenarios/<name>.ts, and anything with a slash or an extension to a path', () => {
    expect(scenarioPath('mixed-traffic')).toBe(resolve(SCENARIOS_DIR, 'mixed-traffic.ts'));
    expect(scenarioPath('./my/run.ts')).toBe(resolve(process.cwd(), 'my/run.ts'));
    expect(scenarioPath('run.mjs')).toBe(resolve(process.cwd(), 'run.mjs'));
    expect(scenarioPath('/abs/run.ts')).toBe('/abs/run.ts');
  });
});

describe('loadScenario: the bundled scenarios', () => {
  for (const name of SIX) {
    it(`loads and validates ${name}`, async () => {
      const scenario = await loadScenario(name);
      expect(scenario.name).toBe(name);
      expect(scenario.flows.length).toBeGreaterThan(0);
      for (const f of scenario.flows) expect(typeof f.run).toBe('function');
      expect(validateScenario(scenario, name)).toBe(scenario);
      // Its workload resolves too.
      const w = resolveWorkload(scenario.workload, 1);
      expect(w.durationMs).toBeGreaterThan(0);
    });
  }

  it('loads by path as well as by name', async () => {
    const scenario = await loadScenario(join(SCENARIOS_DIR, 'store-admin.ts'));
    expect(scenario.name).toBe('store-admin');
  });
});

describe('loadScenario: malformed files', () => {
  it('loads a minimal valid file, with a named `scenario` export too', async () => {
    const path = scenarioFile(module(`flows: [${flow('a')}]`));
    expect((await loadScenario(path)).name).toBe('tmp');
    const named = scenarioFile(
      `export const scenario = { name: 'named', workload: { executor: 'constant-vus', vus: 1 }, flows: [${flow('a')}] };\n`,
    );
    expect((await loadScenario(named)).name).toBe('named');
  });

  const cases: [string, string, RegExp][] = [
    [
      'missing name',
      `export default { workload: { executor: 'constant-vus', vus: 1 }, flows: [${flow('a')}] };\n`,
      /name must be a non-empty string$/,
    ],
    ['empty flows', module('flows: []'), /flows must be a non-empty list$/],
    [
      'duplicate flow names',
      module(`flows: [${flow('a')}, ${flow('b')}, ${flow('a')}]`),
      /flows\[2\]\.name 'a' is used twice$/,
    ],
    ['non-function run', module(`flows: [{ name: 'a', run: 'go' }]`), /flows\[0\]\.run must be a function$/],
    [
      'bad weight',
      module(`flows: [${flow('a', ', weight: 0')}]`),
      /flows\[0\]\.weight must be a positive number$/,
    ],
    [
      'no default export',
      `export const other = 1;\n`,
      /the default export is not a scenario \(use defineScenario\)$/,
    ],
  ];
  for (const [name, source, message] of cases) {
    it(`rejects a file with ${name}`, async () => {
      const path = scenarioFile(source);
      const text = await inputError(() => loadScenario(path));
      expect(text).toMatch(new RegExp(`^scenario ${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
      expect(text).toMatch(message);
    });
  }

  it('rejects a file with a syntax error in one line', async () => {
    const path = scenarioFile(`export default { name: 'broken', flows: [ ;\n`);
    const text = await inputError(() => loadScenario(path));
    expect(text).toMatch(/^scenario .*scenario-\d+\.ts: does not load: \S/);
  });

  // Regression: a syntax error once kept only esbuild's first line, which says neither what nor where.
  it('says what and where the syntax error is', async () => {
    const path = scenarioFile(`export default { name: 'broken', flows: [ ;\n`);
    const text = await inputError(() => loadScenario(path));
    expect(text).toMatch(/unexpected|error:.*\d+:\d+|:1:\d+/i);
    expect(text).not.toMatch(/Transform failed with 1 error:$/);
  });

  it('rejects a file that throws while loading', async () => {
    const path = scenarioFile(`throw new Error('no database here');\nexport default {};\n`);
    expect(await inputError(() => loadScenario(path))).toMatch(/does not load: no database here$/);
  });

  it('rejects a missing file, naming it', async () => {
    const missing = join(dir, 'nowhere.ts');
    expect(await inputError(() => loadScenario(missing))).toBe(
      `scenario '${missing}': no such file (${missing})`,
    );
    expect(await inputError(() => loadScenario('no-such-scenario'))).toBe(
      `scenario 'no-such-scenario': no such scenario (built in: ${builtInScenarios().join(', ')}; one of your own is named by its path: ./load/mine.ts)`,
    );
  });

  it('a misspelt name: the nearest built-in scenario, and those that exist', async () => {
    expect(builtInScenarios()).toContain('catalogue-browse');
    expect(builtInScenarios()).not.toContain('lib');
    expect(await inputError(() => loadScenario('catalog-browse'))).toMatch(
      /^scenario 'catalog-browse': no such scenario; did you mean catalogue-browse\? \(built in: catalogue-browse, compliance, .*mixed-traffic, .*; one of your own is named by its path: \.\/load\/mine\.ts\)$/,
    );
  });
});

describe('validateScenario', () => {
  const good = () => ({
    name: 'ok',
    workload: { executor: 'constant-vus', vus: 1 },
    flows: [{ name: 'a', run: async () => {} }],
  });
  const problem = (value: unknown) => {
    try {
      validateScenario(value, 'src.ts');
    } catch (error) {
      expect(error).toBeInstanceOf(InputError);
      return (error as Error).message;
    }
    return undefined;
  };

  it('accepts a complete scenario and returns it', () => {
    const s = {
      ...good(),
      plan: 'pro',
      enforce: false,
      thresholds: ['p99<300ms'],
      setup: () => 1,
      teardown: () => {},
      flows: [
        { name: 'a', weight: 3, run: async () => {} },
        { name: 'b', weight: 0.5, run: async () => {} },
      ],
    };
    expect(validateScenario(s, 'src.ts')).toBe(s);
  });

  it('names the source and the problem', () => {
    expect(problem(null)).toBe('scenario src.ts: the default export is not a scenario (use defineScenario)');
    expect(problem(42)).toMatch(/the default export is not a scenario/);
    expect(problem({ ...good(), name: '' })).toBe('scenario src.ts: name must be a non-empty string');
    expect(problem({ ...good(), workload: undefined })).toBe('scenario src.ts: workload is missing');
    expect(problem({ ...good(), flows: 'a' })).toBe('scenario src.ts: flows must be a non-empty list');
    expect(problem({ ...good(), flows: [null] })).toBe(
      'scenario src.ts: flows[0].name must be a non-empty string',
    );
    expect(problem({ ...good(), flows: [{ run: async () => {} }] })).toBe(
      'scenario src.ts: flows[0].name must be a non-empty string',
    );
    for (const weight of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '2']) {
      const flows = [{ name: 'a', weight, run: async () => {} }];
      expect(problem({ ...good(), flows }), String(weight)).toBe(
        'scenario src.ts: flows[0].weight must be a positive number',
      );
    }
    expect(problem({ ...good(), setup: 'x' })).toBe('scenario src.ts: setup must be a function');
    expect(problem({ ...good(), teardown: {} })).toBe('scenario src.ts: teardown must be a function');
    expect(problem({ ...good(), plan: 5 })).toBe('scenario src.ts: plan must be a plan name');
    expect(problem({ ...good(), enforce: 'yes' })).toBe('scenario src.ts: enforce must be true or false');
    expect(problem({ ...good(), thresholds: 'p99<1s' })).toBe(
      'scenario src.ts: thresholds must be a list of expressions',
    );
    expect(problem({ ...good(), thresholds: [1] })).toBe(
      'scenario src.ts: thresholds[0] must be an expression or { threshold, abortOnFail?, delayAbortEval? }',
    );
    expect(
      problem({ ...good(), thresholds: ['p99<1s', { threshold: 'errors<1%', abortOnFail: 'yes' }] }),
    ).toBe(
      'scenario src.ts: thresholds[1] must be an expression or { threshold, abortOnFail?, delayAbortEval? }',
    );
    expect(
      problem({ ...good(), thresholds: ['p99<1s', { threshold: 'errors<1%', abortOnFail: true }] }),
    ).toBe(undefined);
  });
});
