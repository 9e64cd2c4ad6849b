import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ValidateFunction } from 'ajv';
import { InputError } from './input-error.ts';

/** One quota: at most `limit` requests per fixed window of `seconds`. */
export interface RateWindow {
  name: string;
  limit: number;
  seconds: number;
}

export interface Plan {
  name: string;
  windows: RateWindow[];
}

export type PlanTable = Record<string, Plan>;

export const MINUTE_SECONDS = 60;
export const DAY_SECONDS = 86_400;

function perMinuteAndDay(name: string, perMinute: number, perDay: number): Plan {
  return {
    name,
    windows: [
      { name: 'minute', limit: perMinute, seconds: MINUTE_SECONDS },
      { name: 'day', limit: perDay, seconds: DAY_SECONDS },
    ],
  };
}

/**
 * The seed's plan table. Enterprise is "custom" there; 6000/min and 1,000,000/day is our documented
 * default, replaced through a plans file.
 */
export const DEFAULT_PLANS: Readonly<PlanTable> = Object.freeze({
  free: perMinuteAndDay('free', 60, 1000),
  pro: perMinuteAndDay('pro', 300, 10_000),
  business: perMinuteAndDay('business', 1000, 100_000),
  enterprise: perMinuteAndDay('enterprise', 6000, 1_000_000),
});

const positiveInt = { type: 'integer', minimum: 1 } as const;
const planFileSchema = {
  type: 'object',
  additionalProperties: {
    type: 'object',
    additionalProperties: false,
    properties: {
      perMinute: positiveInt,
      perDay: positiveInt,
      windows: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['limit', 'seconds'],
          properties: {
            name: { type: 'string', minLength: 1 },
            limit: positiveInt,
            seconds: { type: 'number', exclusiveMinimum: 0 },
          },
        },
      },
    },
  },
} as const;

// Compiled when a plans file is read, not when this module loads: every process (the CLI, the
// embedded server, each worker thread) loads it, and few read a plans file.
let validatePlanFile: ValidateFunction | undefined;

interface PlanEntry {
  perMinute?: number;
  perDay?: number;
  windows?: { name?: string; limit: number; seconds: number }[];
}

/**
 * Applies a plans file over a table. Two shapes per plan, because most users only change the two
 * numbers of the seed's table while some need other windows:
 *   { "enterprise": { "perMinute": 20000, "perDay": 5000000 },
 *     "burst": { "windows": [{ "name": "second", "limit": 10, "seconds": 1 }] } }
 * `perMinute`/`perDay` change one window of a known plan and keep the other; `windows` replaces them all.
 */
export function applyPlanOverrides(
  table: Readonly<PlanTable>,
  overrides: unknown,
  source = 'plans',
): PlanTable {
  // ajv (60 modules) is required here, when a plans file is read: most starts read none.
  validatePlanFile ??= new (createRequire(import.meta.url)('ajv').Ajv as typeof AjvClass)({
    allErrors: false,
  }).compile(planFileSchema);
  if (!validatePlanFile(overrides)) {
    const error = validatePlanFile.errors?.[0];
    const where = error?.instancePath ? ` at ${error.instancePath}` : '';
    throw new InputError(`${source}${where}: ${error?.message ?? 'invalid plan table'}`);
  }
  const result: PlanTable = structuredClone(table) as PlanTable;
  for (const [name, entry] of Object.entries(overrides as Record<string, PlanEntry>)) {
    if (entry.windows) {
      if (entry.perMinute !== undefined || entry.perDay !== undefined) {
        throw new InputError(`${source}: plan '${name}' gives both windows and perMinute/perDay; give one`);
      }
      result[name] = {
        name,
        windows: entry.windows.map((w, i) => ({
          name: w.name ?? `window${i + 1}`,
          limit: w.limit,
          seconds: w.seconds,
        })),
      };
      continue;
    }
    const base = result[name] ?? { name, windows: [] };
    const windows = [...base.windows];
    for (const [windowName, seconds, limit] of [
      ['minute', MINUTE_SECONDS, entry.perMinute],
      ['day', DAY_SECONDS, entry.perDay],
    ] as const) {
      if (limit === undefined) continue;
      const at = windows.findIndex((w) => w.name === windowName);
      const window = { name: windowName, limit, seconds };
      if (at >= 0) windows[at] = window;
      else windows.push(window);
    }
    if (windows.length === 0) throw new InputError(`${source}: plan '${name}' has no limits`);
    windows.sort((a, b) => a.seconds - b.seconds);
    result[name] = { name, windows };
  }
  return result;
}

/**
 * Divides every window by `timeScale`, so tests and demos cross several windows in seconds.
 * Limits stay as they are: a scaled Free plan still admits 60 requests per (now shorter) minute.
 */
export function scalePlan(plan: Plan, timeScale: number): Plan {
  if (!(timeScale > 0) || !Number.isFinite(timeScale))
    throw new InputError(`time scale must be a positive number, got ${timeScale}`);
  return { name: plan.name, windows: plan.windows.map((w) => ({ ...w, seconds: w.seconds / timeScale })) };
}

export function getPlan(table: Readonly<PlanTable>, name: string): Plan {
  const plan = table[name];
  if (!plan) throw new InputError(`unknown plan '${name}' (known: ${Object.keys(table).join(', ')})`);
  return plan;
}

/** The plan's shortest window: it sets the pace (requests per second) that the plan allows. */
export function shortestWindow(windows: readonly RateWindow[]): RateWindow | undefined {
  let shortest: RateWindow | undefined;
  for (const w of windows) if (!shortest || w.seconds < shortest.seconds) shortest = w;
  return shortest;
}

/** Requests per second the plan allows over its shortest window; 0 for a plan without windows. */
export function planRate(windows: readonly RateWindow[]): number {
  const w = shortestWindow(windows);
  return w ? w.limit / w.seconds : 0;
}
