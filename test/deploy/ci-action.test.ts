import { randomUUID } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO } from '../helpers/integration-cli.ts';
import { packTarball, run as runCommand, stopRunning } from '../helpers/package.ts';

/**
 * action.yml as a GitHub runner runs it: its inputs' defaults under `with`, the expressions it uses
 * (`${{ inputs.X }}`, `${{ steps.ID.outputs.X }}`) substituted, each
 * `run:` step written to a file under RUNNER_TEMP and run by its shell's command line in its working
 * directory, with fresh GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_ENV and GITHUB_PATH files per step,
 * and the step after a failing one not run. The user's project lives in a temporary folder outside
 * this checkout (its own package.json, a scenario that imports `petstore-load`), and `version` is the
 * package as `npm pack` makes it. Then the GitLab template: the same flags, and its script run as a
 * GitLab runner would.
 *
 * PETSTORE_LOAD_TARBALL=path runs the test against a tarball packed already instead of packing one.
 */
const ACTION_PATH = REPO;
const action = parse(readFileSync(join(REPO, 'action.yml'), 'utf8')) as Action;
const gitlab = parse(readFileSync(join(REPO, 'ci/gitlab/petstore-load.gitlab-ci.yml'), 'utf8')) as Record<
  string,
  GitLabJob
>;

interface ActionStep {
  id?: string;
  name?: string;
  shell?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  'working-directory'?: string;
}
interface Action {
  inputs: Record<string, { description: string; required?: boolean; default?: string }>;
  outputs: Record<string, { description: string; value: string }>;
  runs: { using: string; steps: ActionStep[] };
}
interface GitLabJob {
  image?: string;
  variables: Record<string, string>;
  script: string[];
  artifacts: { when: string; paths: string[]; reports: { junit: string } };
}

/** What one step did. */
interface StepRun {
  id: string;
  code: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
}
/** What the action did: its steps (up to the first that failed), its outputs and the job's step summary. */
interface ActionRun {
  steps: StepRun[];
  step: (id: string) => StepRun;
  outputs: Record<string, string>;
  summary: string;
}

// --- A runner for composite actions: as much of one as action.yml uses ---

/** The shells' command lines, as GitHub's runner has them ({0}: the script file). */
const SHELLS: Record<string, string[]> = {
  bash: ['bash', '--noprofile', '--norc', '-eo', 'pipefail', '{0}'],
  sh: ['sh', '-e', '{0}'],
};

/** `name=value` lines and `name<<DELIMITER` blocks, as GITHUB_OUTPUT and GITHUB_ENV take them. */
function parseFileCommands(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const heredoc = /^([^=]+?)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2] as string, i + 1);
      if (end < 0) throw new Error(`no ${heredoc[2]} to end ${heredoc[1]}`);
      values[heredoc[1] as string] = lines.slice(i + 1, end).join('\n');
      i = end;
    } else if (line.includes('=')) {
      values[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    } else if (line.trim() !== '') {
      throw new Error(`not a file command: ${line}`);
    }
  }
  return values;
}

interface Context {
  inputs: Record<string, string>;
  steps: Record<string, { outputs: Record<string, string> }>;
}

/** The expressions action.yml uses; any other is this runner's gap, and fails the test. */
function substitute(text: string, context: Context): string {
  return text.replace(/\$\{\{\s*(.*?)\s*\}\}/g, (_, expression: string) => {
    const input = /^inputs\.([\w-]+)$/.exec(expression);
    if (input) return context.inputs[input[1] as string] ?? '';
    const output = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expression);
    if (output) return context.steps[output[1] as string]?.outputs[output[2] as string] ?? '';
    throw new Error(`an expression this test's runner does not evaluate: ${expression}`);
  });
}

/** A job's runner: its workspace, its temporary folder (RUNNER_TEMP, shared by the job's steps) and environment. */
interface Job {
  workspace: string;
  temp: string;
  env: Record<string, string>;
  /** The job's step summary: every step's, in order. */
  summary: string[];
}

function newJob(root: string, name: string): Job {
  const workspace = join(root, name, 'workspace');
  const temp = join(root, name, 'runner-temp');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(temp, { recursive: true });
  // The machine's environment without what vitest, npm or an enclosing CI put there.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key, value]) =>
        value !== undefined &&
        !/^(npm_|VITEST|NODE_OPTIONS$|NODE_ENV$|TEST$|INIT_CWD$|GITHUB_|RUNNER_|CI_|PETSTORE_)/i.test(key),
    ),
  ) as Record<string, string>;
  return {
    workspace,
    temp,
    env: { ...env, CI: 'true', GITHUB_ACTIONS: 'true', RUNNER_OS: 'Linux', NO_COLOR: '1' },
    summary: [],
  };
}

/** `uses: ./` with `with:` in `job`: the composite action's steps, one after another, as the runner runs them. */
async function runAction(job: Job, withInputs: Record<string, string>): Promise<ActionRun> {
  expect(action.runs.using).toBe('composite');
  for (const name of Object.keys(withInputs)) {
    if (!(name in action.inputs)) throw new Error(`action.yml has no input ${name}`);
  }
  const inputs: Record<string, string> = {};
  for (const [name, input] of Object.entries(action.inputs)) {
    if (input.required && !withInputs[name]) throw new Error(`input ${name} is required`);
    inputs[name] = withInputs[name] ?? input.default ?? '';
  }
  const context: Context = { inputs, steps: {} };
  const steps: StepRun[] = [];
  const startSummary = job.summary.length;
  for (const [index, step] of action.runs.steps.entries()) {
    if (step.uses !== undefined || step.run === undefined)
      throw new Error('this runner runs `run:` steps only');
    const id = step.id ?? `__run_${index}`;
    const files = join(job.temp, '_runner_file_commands', randomUUID());
    mkdirSync(files, { recursive: true });
    const file = (name: string) => {
      const path = join(files, name);
      writeFileSync(path, '');
      return path;
    };
    const commands = {
      GITHUB_OUTPUT: file('set_output'),
      GITHUB_STEP_SUMMARY: file('step_summary'),
      GITHUB_ENV: file('set_env'),
      GITHUB_PATH: file('add_path'),
    };
    const script = join(job.temp, `${randomUUID()}.sh`);
    writeFileSync(script, substitute(step.run, context));
    const shell = SHELLS[step.shell ?? ''];
    if (!shell) throw new Error(`a composite step needs a shell this runner knows, not ${step.shell}`);
    const env: Record<string, string> = { ...job.env };
    for (const [key, value] of Object.entries(step.env ?? {})) env[key] = substitute(String(value), context);
    Object.assign(env, commands, {
      GITHUB_WORKSPACE: job.workspace,
      RUNNER_TEMP: job.temp,
      GITHUB_ACTION_PATH: ACTION_PATH,
    });
    const cwd = resolve(job.workspace, substitute(step['working-directory'] ?? '.', context));
    const [command, ...args] = shell.map((part) => (part === '{0}' ? script : part));
    const outcome = await runCommand(command as string, args, cwd, env, 90_000, true);
    const outputs = parseFileCommands(readFileSync(commands.GITHUB_OUTPUT, 'utf8'));
    context.steps[id] = { outputs };
    steps.push({ id, ...outcome, outputs });
    job.summary.push(readFileSync(commands.GITHUB_STEP_SUMMARY, 'utf8'));
    // What a step adds to the environment and PATH holds for the job's later steps.
    Object.assign(job.env, parseFileCommands(readFileSync(commands.GITHUB_ENV, 'utf8')));
    const paths = readFileSync(commands.GITHUB_PATH, 'utf8').split('\n').filter(Boolean);
    if (paths.length > 0) job.env.PATH = [...paths.reverse(), job.env.PATH].join(delimiter);
    if (outcome.code !== 0) break;
  }
  const outputs = Object.fromEntries(
    Object.entries(action.outputs).map(([name, output]) => [name, substitute(output.value, context)]),
  );
  return {
    steps,
    step: (id) => {
      const found = steps.find((s) => s.id === id);
      if (!found) throw new Error(`step ${id} did not run: ${JSON.stringify(steps, null, 2)}`);
      return found;
    },
    outputs,
    summary: job.summary.slice(startSummary).join(''),
  };
}

/** A step's outcome as an assertion's message. */
const told = (run: ActionRun) =>
  run.steps.map((s) => `step ${s.id}: exit ${s.code}\nstdout: ${s.stdout}\nstderr: ${s.stderr}`).join('\n');

// --- The user's project ---

const SCENARIO = `import { defineScenario } from 'petstore-load';

/** Browsing, at 4 iterations a second: under the Free plan's 10 requests a second. */
export default defineScenario({
  name: 'browse',
  plan: 'free',
  workload: { executor: 'constant-arrival-rate', rate: 4, duration: '2s' },
  thresholds: ['checks>=100%'],
  flows: [
    {
      name: 'list-pets',
      run: async (api): Promise<void> => {
        await api.listPets({ limit: 5 });
      },
    },
  ],
});
`;

function userApp(dir: string, packageJson: Record<string, unknown> = {}): void {
  mkdirSync(join(dir, 'load'), { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'user-app', private: true, type: 'module', ...packageJson }, null, 2)}\n`,
  );
  writeFileSync(join(dir, 'load', 'browse.ts'), SCENARIO);
}

// --- The package, packed once for the file ---

let root = '';
let tarball = '';

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'petstore-load-ci-action-'));
  tarball = process.env.PETSTORE_LOAD_TARBALL
    ? resolve(process.env.PETSTORE_LOAD_TARBALL)
    : await packTarball(join(root, 'pack'));
}, 150_000);

afterAll(() => {
  stopRunning();
  if (root) rmSync(root, { recursive: true, force: true });
});

const exists = (path: string | undefined) => Boolean(path) && existsSync(path as string);
const read = (path: string | undefined) => readFileSync(path as string, 'utf8');

describe('the GitHub action, run as a runner runs it, in a project outside this checkout', () => {
  // One job: the second use of the action reuses the first's install, as in a real job.
  let job: Job;
  let app: string;
  let first: ActionRun;

  it('installs the packed tarball outside the project, runs the scenario with its gates, and hands over the run', async () => {
    job = newJob(root, 'job');
    app = join(job.workspace, 'app');
    userApp(app);
    const packageJson = readFileSync(join(app, 'package.json'), 'utf8');
    first = await runAction(job, {
      version: tarball,
      scenario: 'load/browse.ts',
      'working-directory': 'app',
      thresholds: 'errors<1%\nrate_limited==0, violations==0',
      baseline: 'perf/baseline.json',
      args: "--duration 2s --rate '4' --seed 7",
    });
    const run = first.step('run');
    expect(run.code, told(first)).toBe(0);
    expect(first.outputs['exit-code']).toBe('0');

    // The outputs name the files the run wrote, in the out folder under the working directory.
    const out = join(app, 'petstore-load-report');
    expect(first.outputs).toMatchObject({
      result: join(out, 'result.json'),
      report: join(out, 'report.html'),
      junit: join(out, 'junit.xml'),
      summary: join(out, 'summary.md'),
    });
    for (const name of ['result', 'report', 'junit', 'summary'])
      expect(exists(first.outputs[name]), name).toBe(true);
    expect(first.outputs.cli?.startsWith(join(job.temp, 'petstore-load'))).toBe(true);

    // The run: the user's scenario (its import of petstore-load resolved), with every threshold given.
    const result = JSON.parse(read(first.outputs.result));
    expect(result.meta.scenario).toBe('browse');
    expect(result.thresholds.map((t: { expression: string }) => t.expression).sort()).toEqual(
      ['checks>=100%', 'errors<1%', 'rate_limited==0', 'violations==0'].sort(),
    );
    expect(result.thresholds.every((t: { passed: boolean }) => t.passed)).toBe(true);
    const junit = read(first.outputs.junit);
    expect(junit).toContain('errors&lt;1%');
    expect(junit).not.toContain('<failure');
    expect(read(first.outputs.report)).toMatch(/^<!doctype html>/i);

    // The step summary holds the run's markdown summary, and says the baseline was not there yet.
    expect(first.summary).toContain(read(first.outputs.summary).trim());
    expect(first.summary).toContain('No baseline at `perf/baseline.json` yet');

    // The project is as it was (no node_modules, no lockfile, its package.json untouched): the scenario's
    // import of petstore-load found the copy in RUNNER_TEMP, with no node_modules on its way up.
    expect(readdirSync(app).sort()).toEqual(['load', 'package.json', 'petstore-load-report']);
    expect(readFileSync(join(app, 'package.json'), 'utf8')).toBe(packageJson);
  }, 120_000);

  it('fails the step on a threshold that must fail, with the summary and outputs written all the same', async () => {
    expect(first, 'the first run').toBeDefined();
    mkdirSync(join(app, 'perf'));
    copyFileSync(first.outputs.result as string, join(app, 'perf', 'baseline.json'));
    const failing = await runAction(job, {
      version: tarball,
      scenario: 'load/browse.ts',
      'working-directory': 'app',
      thresholds: 'p99<0.001ms',
      baseline: 'perf/baseline.json',
      out: 'reports/failing',
      args: '--duration 2s',
    });
    // The install of the first use, reused.
    expect(failing.step('install').stdout).toContain('installed earlier in this job');
    const run = failing.step('run');
    expect(run.code, told(failing)).toBe(1);
    expect(failing.outputs['exit-code']).toBe('1');
    for (const name of ['result', 'report', 'junit', 'summary']) {
      expect(failing.outputs[name]?.startsWith(join(app, 'reports', 'failing')), name).toBe(true);
      expect(exists(failing.outputs[name]), name).toBe(true);
    }
    const result = JSON.parse(read(failing.outputs.result));
    expect(
      result.thresholds.find((t: { expression: string }) => t.expression === 'p99<0.001ms')?.passed,
    ).toBe(false);
    expect(result.baseline, 'compared with the baseline').toBeDefined();
    expect(read(failing.outputs.junit)).toMatch(/<testcase[^>]*p99&lt;0\.001ms[^>]*>\s*<failure/);
    expect(failing.summary).toContain(read(failing.outputs.summary).trim());
    expect(failing.summary).toContain('`p99<0.001ms`');
    expect(failing.summary).toContain('**petstore-load exited 1** (a threshold failed');
    expect(failing.summary).not.toContain('No baseline at');
    expect(existsSync(join(app, 'node_modules'))).toBe(false);
  }, 120_000);

  it('says in the summary why a run that could not start made no result (exit 2)', async () => {
    const bad = await runAction(job, {
      version: tarball,
      scenario: 'load/missing.ts',
      'working-directory': 'app',
      out: 'reports/bad',
    });
    const run = bad.step('run');
    expect(run.code, told(bad)).toBe(2);
    expect(bad.outputs).toMatchObject({ 'exit-code': '2', result: '', report: '', junit: '', summary: '' });
    expect(bad.summary).toContain('### petstore-load: `load/missing.ts` did not run to a result');
    expect(bad.summary).toContain('**petstore-load exited 2** (bad usage or input)');
    expect(bad.summary).toContain('no such file');
  }, 60_000);

  it('fails the step on a baseline that is not there when baseline-required is true: no gate passes unseen', async () => {
    const missing = await runAction(job, {
      version: tarball,
      scenario: 'load/browse.ts',
      'working-directory': 'app',
      out: 'reports/no-baseline',
      baseline: 'perf/moved.json',
      'baseline-required': 'true',
    });
    expect(missing.step('run').code, told(missing)).toBe(2);
    expect(missing.outputs['exit-code']).toBe('2');
    expect(missing.summary).toContain('no baseline at `perf/moved.json` (baseline-required)');
  }, 60_000);
});

describe("the GitHub action with the project's own petstore-load", () => {
  it('runs the copy in devDependencies when no version is given, and leaves it in place', async () => {
    const job = newJob(root, 'own');
    const app = job.workspace;
    userApp(app, { devDependencies: { 'petstore-load': `file:${tarball}` } });
    // The user's `npm ci` (here an install: the project has no lockfile).
    const installed = await runCommand(
      'npm',
      ['install', '--no-audit', '--no-fund'],
      app,
      job.env,
      120_000,
      true,
    );
    expect(installed.code, installed.stderr).toBe(0);
    const run = await runAction(job, { scenario: 'load/browse.ts', args: '--duration 2s' });
    expect(run.step('run').code, told(run)).toBe(0);
    expect(run.outputs.cli).toBe(join(app, 'node_modules', '.bin', 'petstore-load'));
    expect(run.step('install').stdout).toContain("the project's own");
    expect(exists(run.outputs.result)).toBe(true);
    expect(run.summary).toContain(read(run.outputs.summary).trim());
    // Nothing installed beside it.
    expect(readdirSync(job.temp).includes('petstore-load')).toBe(false);
  }, 180_000);
});

// --- The GitLab template ---

/** The `petstore-load run` flags a script builds into its `args` array. */
function runFlags(script: string): string[] {
  const flags = new Set<string>();
  for (const m of script.matchAll(/\bargs\+?=\(([^)]*)\)/g)) {
    for (const flag of (m[1] as string).matchAll(/--[a-z][a-z0-9-]*/g)) flags.add(flag[0]);
  }
  return [...flags].sort();
}

describe('the GitLab CI template', () => {
  const job = gitlab['.petstore-load'] as GitLabJob;
  const script = job.script.join('\n');
  const runStep = action.runs.steps.find((s) => s.id === 'run')?.run ?? '';

  it('is a hidden job whose artifacts keep the out folder and report the JUnit XML, pass or fail', () => {
    expect(Object.keys(gitlab)).toEqual(['.petstore-load']);
    expect(job.artifacts.when).toBe('always');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: GitLab's variables, expanded by its runner
    expect(job.artifacts.paths).toEqual(['${PETSTORE_LOAD_WORKING_DIRECTORY}/${PETSTORE_LOAD_OUT}/']);
    expect(job.artifacts.reports.junit).toBe(`${job.artifacts.paths[0]}junit.xml`);
    expect(job.variables.PETSTORE_LOAD_OUT).toBe(action.inputs.out?.default);
  });

  it("has a variable for each of the action's inputs, and runs the CLI with the same flags", () => {
    const variables = Object.keys(action.inputs).map(
      (name) => `PETSTORE_LOAD_${name.toUpperCase().replace(/-/g, '_')}`,
    );
    expect(Object.keys(job.variables).sort()).toEqual(variables.sort());
    expect(runFlags(runStep)).toEqual([
      '--base-url',
      '--baseline',
      '--junit',
      '--out',
      '--summary-md',
      '--threshold',
    ]);
    expect(runFlags(script)).toEqual(runFlags(runStep));
  });

  it('runs as a GitLab job would: a failing threshold fails the job, its JUnit XML where the report says', async () => {
    const runner = newJob(root, 'gitlab');
    const project = runner.workspace;
    userApp(join(project, 'app'));
    const variables = {
      ...job.variables,
      PETSTORE_LOAD_VERSION: tarball,
      PETSTORE_LOAD_SCENARIO: 'load/browse.ts',
      PETSTORE_LOAD_WORKING_DIRECTORY: 'app',
      PETSTORE_LOAD_THRESHOLDS: 'errors<1%,p99<0.001ms',
      PETSTORE_LOAD_ARGS: '--duration 2s',
    };
    // The runner's bash: the script's lines in one shell that stops at the first failure.
    const file = join(runner.temp, 'gitlab-script.sh');
    writeFileSync(file, `${script}\n`);
    // TMPDIR: the first GitHub job's temporary folder, whose install the script finds and reuses (the same
    // key, the same layout): a GitLab job's own install is the action's, tested above, and costs seconds.
    const installs = join(root, 'job', 'runner-temp');
    mkdirSync(installs, { recursive: true });
    const outcome = await runCommand(
      'bash',
      ['--noprofile', '--norc', '-eo', 'pipefail', file],
      project,
      { ...runner.env, ...variables, CI_PROJECT_DIR: project, TMPDIR: installs },
      120_000,
      true,
    );
    expect(outcome.code, `${outcome.stdout}\n${outcome.stderr}`).toBe(1);
    expect(outcome.stdout).toContain('petstore-load exited 1');
    // The artifacts' paths, as the runner expands them.
    const expand = (path: string) =>
      path.replace(/\$\{(\w+)\}/g, (_, name: string) => variables[name as keyof typeof variables] ?? '');
    const junit = join(project, expand(job.artifacts.reports.junit));
    expect(read(junit)).toMatch(/p99&lt;0\.001ms[^>]*>\s*<failure/);
    const out = join(project, expand(job.artifacts.paths[0] as string));
    expect(readdirSync(out).sort()).toEqual(['junit.xml', 'report.html', 'result.json', 'summary.md']);
    // The summary in the job's log, since GitLab has no step summary.
    expect(outcome.stdout).toContain(read(join(out, 'summary.md')).trim().split('\n')[0]);
    expect(readdirSync(join(project, 'app')).sort()).toEqual([
      'load',
      'package.json',
      'petstore-load-report',
    ]);
    expect(dirname(junit)).toBe(out.replace(/\/$/, ''));
  }, 120_000);
});
