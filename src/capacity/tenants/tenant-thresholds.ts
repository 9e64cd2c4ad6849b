import { InputError } from '../../api/input-error.ts';
import { type Comparator, compare } from '../../report/threshold-parse.ts';
import type { TenantCapacity } from '../../result/capacity-types.ts';
import type { ThresholdResult } from '../../result/types.ts';

/**
 * `capacity --tenants --threshold`: criteria on the number found, `capacity.tenants.held>=100` or
 * `capacity.tenants.broke_at>=200` (a ramp that never broke passes any broke_at bound: it broke
 * nowhere below its maximum). The step criteria are `--tenant-threshold`.
 */
export interface TenantCapacityThreshold {
  expression: string;
  metric: 'held' | 'broke_at';
  comparator: Comparator;
  value: number;
}

const SHAPE = /^capacity\.tenants\.([a-z_]+)\s*(<=|>=|==|!=|<|>)\s*(\d+)$/;
const METRICS = ['held', 'broke_at'] as const;

export function parseTenantCapacityThreshold(text: string): TenantCapacityThreshold {
  const expression = text.trim();
  const match = SHAPE.exec(expression);
  if (!match)
    throw new InputError(
      `threshold '${expression}': with --tenants, thresholds are capacity.tenants.held<op>N or capacity.tenants.broke_at<op>N (e.g. capacity.tenants.held>=100); each step's criteria are --tenant-threshold`,
    );
  const metric = match[1] as string;
  if (!(METRICS as readonly string[]).includes(metric))
    throw new InputError(`threshold '${expression}': unknown metric '${metric}' (${METRICS.join(', ')})`);
  return {
    expression,
    metric: metric as TenantCapacityThreshold['metric'],
    comparator: match[2] as Comparator,
    value: Number(match[3]),
  };
}

export function evaluateTenantCapacityThreshold(
  t: TenantCapacityThreshold,
  c: TenantCapacity,
): ThresholdResult {
  if (t.metric === 'broke_at' && c.brokeAt === null) {
    // Never broke: it held everywhere up to the maximum, so a lower bound holds, an upper one cannot be judged.
    const passed = t.comparator === '>' || t.comparator === '>=' || t.comparator === '!=';
    return {
      expression: t.expression,
      source: 'cli',
      actual: null,
      passed,
      ...(passed ? {} : { detail: `no step broke up to ${c.maxTenants} tenants: cannot hold` }),
    };
  }
  const actual = t.metric === 'held' ? (c.held ?? 0) : (c.brokeAt as number);
  const passed = compare(actual, t.comparator, t.value);
  return {
    expression: t.expression,
    source: 'cli',
    actual,
    passed,
    ...(passed
      ? {}
      : { detail: `capacity tenants ${t.metric} was ${actual}, wanted ${t.comparator} ${t.value}` }),
  };
}
