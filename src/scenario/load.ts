import { existsSync, readdirSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InputError } from '../api/input-error.ts';
import { nearest } from '../api/nearest-name.ts';
import { NODE_STRIPS, registerScenarioHooks, strippedBySucrase } from '../runtime/typescript.ts';
import { builtScenario } from './built-scenario.ts';
import type { Scenario, ThresholdOption } from './define.ts';

export const SCENARIOS_DIR = fileURLToPath(new URL('../../scenarios/', import.meta.url));

/** `mixed-traffic` names scenarios/mixed-traffic.ts; anything with a slash or an extension is a path. */
export function scenarioPath(nameOrPath: string): string {
  if (/[\\/]/.test(nameOrPath) || /\.[cm]?[jt]s$/.test(nameOrPath)) {
    return isAbsolute(nameOrPath) ? nameOrPath : resolve(process.cwd(), nameOrPath);
  }
  return resolve(SCENARIOS_DIR, `${nameOrPath}.ts`);
}

function fail(source: string, problem: string): never {
  throw new InputError(`scenario ${source}: ${problem}`);
}

/** The scenarios shipped in scenarios/, by name. */
export function builtInScenarios(): string[] {
  return readdirSync(SCENARIOS_DIR)
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.slice(0, -'.ts'.length))
    .sort();
}

/**
 * A scenario that is not there: a name, with the nearest built-in one, those that exist and how a
 * file of one's own is named; a path, as the path it is.
 */
function noSuchScenario(nameOrPath: string, path: string): string {
  if (scenarioPath(nameOrPath) !== resolve(SCENARIOS_DIR, `${nameOrPath}.ts`))
    return `scenario '${nameOrPath}': no such file (${path})`;
  const names = builtInScenarios();
  const near = nearest(nameOrPath, names);
  return `scenario '${nameOrPath}': no such scenario${near ? `; did you mean ${near}?` : ''} (built in: ${names.join(', ')}; one of your own is named by its path: ./load/mine.ts)`;
}

/** Checks the parts a scenario file can get wrong before any request is sent. */
export function validateScenario(value: unknown, source: string): Scenario {
  if (!value || typeof value !== 'object')
    fail(source, 'the default export is not a scenario (use defineScenario)');
  const s = value as Record<string, unknown>;
  if (typeof s.name !== 'string' || !s.name) fail(source, 'name must be a non-empty string');
  if (!s.workload || typeof s.workload !== 'object') fail(source, 'workload is missing');
  if (!Array.isArray(s.flows) || s.flows.length === 0) fail(source, 'flows must be a non-empty list');
  const names = new Set<string>();
  for (const [i, f] of (s.flows as Record<string, unknown>[]).entries()) {
    if (!f || typeof f.name !== 'string' || !f.name)
      fail(source, `flows[${i}].name must be a non-empty string`);
    if (names.has(f.name as string)) fail(source, `flows[${i}].name '${f.name}' is used twice`);
    names.add(f.name as string);
    if (typeof f.run !== 'function') fail(source, `flows[${i}].run must be a function`);
    if (
      f.weight !== undefined &&
      !(typeof f.weight === 'number' && f.weight > 0 && Number.isFinite(f.weight))
    ) {
      fail(source, `flows[${i}].weight must be a positive number`);
    }
  }
  for (const hook of ['setup', 'teardown'] as const) {
    if (s[hook] !== undefined && typeof s[hook] !== 'function') fail(source, `${hook} must be a function`);
  }
  if (s.plan !== undefined && typeof s.plan !== 'string') fail(source, 'plan must be a plan name');
  if (s.enforce !== undefined && typeof s.enforce !== 'boolean')
    fail(source, 'enforce must be true or false');
  if (s.thresholds !== undefined && !Array.isArray(s.thresholds))
    fail(source, 'thresholds must be a list of expressions');
  for (const [i, t] of (s.thresholds ?? []).entries()) {
    if (typeof t === 'string') continue;
    const o = t as Partial<ThresholdOption> | null;
    if (
      typeof o !== 'object' ||
      o === null ||
      typeof o.threshold !== 'string' ||
      (o.abortOnFail !== undefined && typeof o.abortOnFail !== 'boolean') ||
      (o.delayAbortEval !== undefined && typeof o.delayAbortEval !== 'string')
    ) {
      fail(source, `thresholds[${i}] must be an expression or { threshold, abortOnFail?, delayAbortEval? }`);
    }
  }
  return value as Scenario;
}

/**
 * Imports a scenario module and validates it. A scenario shipped in scenarios/ runs from its build
 * (src/scenario/built-scenario.ts) while unchanged; any other through the scenario hooks
 * (src/runtime/scenario-hooks.js): its types stripped by Node where Node can, else by sucrase. Where
 * Node strips, a file that needs more than stripping (an enum) goes through sucrase, and `told` gets
 * one line saying why.
 */
export async function loadScenario(nameOrPath: string, told?: (note: string) => void): Promise<Scenario> {
  const path = scenarioPath(nameOrPath);
  if (!existsSync(path)) throw new InputError(noSuchScenario(nameOrPath, path));
  let module: Record<string, unknown>;
  try {
    module = await importScenario(path, (why) =>
      told?.(`scenario ${nameOrPath} ${why}: loaded through sucrase`),
    );
  } catch (error) {
    const lines = String((error as Error).message ?? error)
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    throw new InputError(
      `scenario ${nameOrPath}: does not load: ${lines.slice(0, 2).join(' ') || 'failed to load'}`,
    );
  }
  // A .js or .cts scenario Node loads as CommonJS: its exports arrive one level down, as the
  // namespace's default.
  const inner = module.default;
  const wrapped =
    inner &&
    typeof inner === 'object' &&
    !('flows' in inner) &&
    ('default' in inner || 'scenario' in inner || !('name' in inner));
  const source = (wrapped ? inner : module) as Record<string, unknown>;
  const exported = source.default ?? source.scenario;
  return validateScenario(exported, nameOrPath);
}

async function importScenario(
  path: string,
  fallback: (why: string) => void,
): Promise<Record<string, unknown>> {
  // A scenario shipped here, stripped by the build and unchanged since: plain JavaScript on any Node.
  const built = builtScenario(path, SCENARIOS_DIR);
  if (built) return import(built);
  await registerScenarioHooks();
  const url = pathToFileURL(path).href;
  try {
    return await import(url);
  } catch (error) {
    // Where Node strips types itself, a file that needs more (an enum) goes through sucrase.
    const why = NODE_STRIPS ? beyondStripping(error as NodeJS.ErrnoException) : undefined;
    if (!why) throw error;
    fallback(why);
    return import(await strippedBySucrase(url));
  }
}

/**
 * Why Node's own stripping refused a scenario that sucrase may load: syntax that needs compiling (an
 * enum, a namespace). Undefined for any other failure, the scenario's own, which is said as it is
 * (its top-level code is never run twice).
 */
function beyondStripping(error: NodeJS.ErrnoException): string | undefined {
  if (error?.code !== 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX') return undefined;
  const first = String(error.message ?? '')
    .split('\n', 1)[0]
    ?.trim();
  return `needs more than type stripping (${first})`;
}
