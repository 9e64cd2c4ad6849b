import { InputError } from '../../api/input-error.ts';
import type { PlanTable } from '../../api/plans.ts';
import type { TenantBreakCause, TenantCapacity, TenantStep } from '../../result/capacity-types.ts';

/**
 * `capacity --tenants`: the ramp's arithmetic, kept apart from any traffic so that it can be tested
 * with a fake step. n tenants of a mix, the doubling and the bisection, and the headline.
 */

/** Bisection steps after the doubling found a break: 1/8 of the last doubling is close enough. */
export const MAX_BISECT_STEPS = 3;

/**
 * Parses `--tenants`: one plan (`pro`) or fixed proportions (`free=4,pro=1`). Proportions are
 * positive numbers; a plan named twice or unknown is refused.
 */
export function parseTenantMix(text: string, plans: PlanTable): Record<string, number> {
  const mix: Record<string, number> = {};
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) throw new InputError("--tenants: name a plan ('pro') or a mix ('free=4,pro=1')");
  for (const part of parts) {
    const [plan, weightText] = part.split('=').map((s) => s.trim()) as [string, string | undefined];
    if (!Object.hasOwn(plans, plan))
      throw new InputError(
        `--tenants: plan '${plan}' is not in the plan table (${Object.keys(plans).join(', ')})`,
      );
    const weight = weightText === undefined ? 1 : Number(weightText);
    if (weightText === '' || !Number.isFinite(weight) || weight <= 0)
      throw new InputError(`--tenants: '${part}': a proportion is a number above 0 (free=4,pro=1)`);
    if (Object.hasOwn(mix, plan)) throw new InputError(`--tenants: plan '${plan}' is named twice`);
    mix[plan] = weight;
  }
  return mix;
}

/**
 * n tenants of a mix, per plan: each plan's share of n by largest remainder, so that they add up to
 * n, and at least one of each (n below the number of plans gives one of each).
 */
export function tenantCounts(mix: Readonly<Record<string, number>>, n: number): Record<string, number> {
  const plans = Object.keys(mix);
  const total = plans.reduce((sum, p) => sum + (mix[p] as number), 0);
  const exact = plans.map((p) => (n * (mix[p] as number)) / total);
  const counts = exact.map((x) => Math.max(1, Math.floor(x)));
  let left = n - counts.reduce((a, b) => a + b, 0);
  // The largest remainders first; ties by the mix's order, so the split is the same every run.
  const byRemainder = plans
    .map((_, i) => i)
    .sort((a, b) => ((exact[b] as number) % 1) - ((exact[a] as number) % 1) || a - b);
  for (let k = 0; left > 0; k = (k + 1) % plans.length, left--) {
    const i = byRemainder[k] as number;
    counts[i] = (counts[i] as number) + 1;
  }
  // The minimum of one may have overshot n: take back from the largest.
  while (left < 0) {
    const i = counts.indexOf(Math.max(...counts));
    if ((counts[i] as number) <= 1) break;
    counts[i] = (counts[i] as number) - 1;
    left++;
  }
  return Object.fromEntries(plans.map((p, i) => [p, counts[i] as number]));
}

/**
 * Keys of each plan the ramp may need: a step's count of a plan never exceeds its share of the
 * largest step rounded up, plus one for the minimum and the remainders.
 */
export function keysNeeded(mix: Readonly<Record<string, number>>, max: number): Record<string, number> {
  const total = Object.values(mix).reduce((a, b) => a + b, 0);
  return Object.fromEntries(Object.entries(mix).map(([plan, w]) => [plan, Math.ceil((max * w) / total) + 1]));
}

/**
 * The largest number of tenants, at most `max`, whose every smaller step finds enough keys of each
 * plan among `available` (a `--tenants-file` target): 0 when even the smallest does not.
 */
export function largestWithKeys(
  mix: Readonly<Record<string, number>>,
  available: Readonly<Record<string, number>>,
  max: number,
): number {
  const least = Object.keys(mix).length;
  let best = 0;
  for (let n = least; n <= max; n++) {
    const counts = tenantCounts(mix, n);
    if (Object.entries(counts).some(([plan, c]) => c > (available[plan] ?? 0))) break;
    best = n;
  }
  return best;
}

export interface RampOptions {
  /** The first step; raised to the number of plans in the mix (one tenant of each at least). */
  start: number;
  max: number;
  /** The fewest tenants a step can have: the bisection never goes below it. */
  least?: number;
  maxBisect?: number;
  /** Asked before every step: true ends the ramp (Ctrl-C), with what it has. */
  stopped?: () => boolean;
}

export interface RampProbe {
  held: boolean;
  /** Cut short (Ctrl-C): not a verdict, so not kept, and the ramp ends. */
  interrupted?: boolean;
}

export interface RampOutcome<S extends RampProbe> {
  /** Every step in the order run, with the number of tenants asked for. */
  steps: { tenants: number; step: S }[];
  /** The largest number that held below the smallest that broke (undefined: none held). */
  held: { tenants: number; step: S } | undefined;
  broke: { tenants: number; step: S } | undefined;
}

/**
 * Doubles the tenants from `start` until a step breaks or `max` is reached, then bisects between the
 * last that held and the first that broke, at most `maxBisect` more steps. A noisy step may break
 * below one that held: the bisection trusts the latest word inside its interval, as any search does,
 * and the result keeps every step so that the curve shows it.
 */
export async function rampTenants<S extends RampProbe>(
  options: RampOptions,
  step: (tenants: number) => Promise<S>,
): Promise<RampOutcome<S>> {
  const least = Math.max(1, options.least ?? 1);
  const max = Math.max(least, Math.floor(options.max));
  const stopped = options.stopped ?? (() => false);
  const steps: RampOutcome<S>['steps'] = [];
  let held: RampOutcome<S>['held'];
  let broke: RampOutcome<S>['broke'];
  let cut = false;
  const take = async (tenants: number): Promise<boolean> => {
    const s = { tenants, step: await step(tenants) };
    if (s.step.interrupted) {
      cut = true;
      return false;
    }
    steps.push(s);
    if (s.step.held) held = s;
    else broke = s;
    return s.step.held;
  };
  let n = Math.min(max, Math.max(least, Math.floor(options.start)));
  while (!stopped()) {
    if (!(await take(n)) || n >= max) break;
    n = Math.min(max, n * 2);
  }
  const bisections = options.maxBisect ?? MAX_BISECT_STEPS;
  for (let i = 0; i < bisections && broke && !cut && !stopped(); i++) {
    const low = held?.tenants ?? least - 1;
    if (broke.tenants - low <= 1) break;
    await take(Math.floor((low + broke.tenants) / 2));
  }
  return { steps, held, broke };
}

/** `pro` -> `Pro`: how the headline names a plan. */
const title = (plan: string) => plan.charAt(0).toUpperCase() + plan.slice(1);
const number = (n: number) => n.toLocaleString('en-US');

/** `1,800 Pro tenants`, or for a mix `1,800 tenants (1,440 Free, 360 Pro)`. */
export function tenantsText(perPlan: Readonly<Record<string, number>>): string {
  const entries = Object.entries(perPlan);
  const total = entries.reduce((sum, [, n]) => sum + n, 0);
  const noun = total === 1 ? 'tenant' : 'tenants';
  if (entries.length === 1) return `${number(total)} ${title(entries[0]?.[0] as string)} ${noun}`;
  return `${number(total)} ${noun} (${entries.map(([p, n]) => `${number(n)} ${title(p)}`).join(', ')})`;
}

/** `p99<300ms` -> `p99 < 300 ms`: thresholds as the headline reads them. */
export function thresholdText(expressions: readonly string[]): string {
  return expressions
    .map((e) =>
      e
        .replace(/\s+/g, '')
        .replace(/(<=|>=|==|!=|<|>)/, ' $1 ')
        .replace(/(\d)([a-zµ%/]+)$/, '$1 $2')
        .replace(/ (%|\/s)$/, '$1'),
    )
    .join(' and ');
}

/** The figures the headline and the verdict are built from, before the headline exists. */
export type TenantCapacityDraft = Omit<TenantCapacity, 'sentence' | 'boundBy'>;

/** What bounds the number: the ramp's maximum, the generator, the target, or Ctrl-C before any. */
export function boundOf(
  c: Pick<TenantCapacity, 'brokeAt' | 'cause' | 'held' | 'maxTenants'>,
): TenantCapacity['boundBy'] {
  if (c.brokeAt === null) return c.held === c.maxTenants ? 'max' : 'interrupted';
  return c.cause === 'generator' ? 'generator' : 'target';
}

/**
 * The headline: "the reference server held 1,800 Pro tenants at their quota with p99 < 300 ms";
 * or, when this machine was the bound, "the generator could not drive more than ...", never a
 * verdict on the target for our own limit.
 */
export function tenantSentence(c: TenantCapacityDraft, target: string): string {
  const held = c.held === null ? null : tenantsText(c.heldPerPlan ?? {});
  const broke = c.steps.find((s) => !s.held && s.tenants === c.brokeAt);
  const brokeText = broke ? tenantsText(broke.perPlan) : number(c.brokeAt ?? 0);
  const scale = c.timeScale === 1 ? '' : ` (time scale ${c.timeScale})`;
  const quota = (n: number | null) => `at ${n === 1 ? 'its' : 'their'} quota${scale}`;
  const within = c.thresholds.length > 0 ? ` with ${thresholdText(c.thresholds)}` : '';
  const why = c.reasons[0] ?? '';
  switch (boundOf(c)) {
    case 'interrupted':
      return held === null
        ? `interrupted before any step of ${target} was measured`
        : `${target} held ${held} ${quota(c.held)}${within}; interrupted before a step broke or the ramp's maximum (${number(c.maxTenants)})`;
    case 'max':
      return `${target} held ${held} ${quota(c.held)}${within}: every step held, up to the ramp's maximum (--max-tenants ${number(c.maxTenants)})`;
    case 'generator':
      return held === null
        ? `the generator could not drive even ${brokeText} ${quota(c.brokeAt)} (${why}): the bound is this machine, not ${target}`
        : `the generator could not drive more than ${held} ${quota(c.held)} (at ${number(c.brokeAt ?? 0)}: ${why}); up to there ${target} held${within}`;
    case 'target':
      return held === null
        ? `${target} did not hold ${brokeText} ${quota(c.brokeAt)}${within}: ${why}`
        : `${target} held ${held} ${quota(c.held)}${within}; at ${number(c.brokeAt ?? 0)}: ${why}`;
  }
}

/** The ramp's figures as the result keeps them: the steps, the number, why it is not larger. */
export function tenantCapacityOf(
  outcome: RampOutcome<TenantStep>,
  settings: Pick<
    TenantCapacity,
    'mix' | 'thresholds' | 'stepMs' | 'restMs' | 'timeScale' | 'start' | 'maxTenants' | 'warmup'
  >,
  target: string,
): TenantCapacity {
  const broke = outcome.broke?.step;
  const held = outcome.held?.step;
  const draft: TenantCapacityDraft = {
    ...settings,
    held: held?.tenants ?? null,
    heldPerPlan: held ? held.perPlan : null,
    brokeAt: broke?.tenants ?? null,
    cause: (broke?.cause ?? null) as TenantBreakCause | null,
    reasons: broke?.reasons ?? [],
    steps: outcome.steps.map((s) => s.step),
  };
  return { ...draft, boundBy: boundOf(draft), sentence: tenantSentence(draft, target) };
}
