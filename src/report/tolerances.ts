import { InputError } from '../api/input-error.ts';

export const METRICS = ['p50', 'p95', 'p99', 'rps', 'errors', 'rate_limited'] as const;
export type Metric = (typeof METRICS)[number];

/**
 * How much worse each metric may get before it counts as a regression, as a fraction.
 * Latencies and rps are relative (0.1: 10% slower, 10% fewer per second); the error and 429 rates
 * are absolute shares (0.01: one percentage point), since a relative change of a rate near zero
 * (0.1% to 0.2% is +100%) says nothing.
 */
export type Tolerances = Record<Metric, number>;

/**
 * 10% on each latency percentile and on throughput is what two runs of one scenario on one quiet
 * machine stay within; one point of errors or 429s is a change someone would act on.
 */
export const DEFAULT_TOLERANCES: Readonly<Tolerances> = {
  p50: 0.1,
  p95: 0.1,
  p99: 0.1,
  rps: 0.1,
  errors: 0.01,
  rate_limited: 0.01,
};

const FLAG = '--max-regression';

/** `p99=10%,rps=5%,errors=1%` over the defaults; anything malformed is an InputError saying what. */
export function parseTolerances(text: string | undefined): Tolerances {
  const tolerances = { ...DEFAULT_TOLERANCES };
  if (text === undefined) return tolerances;
  if (text.trim() === '')
    throw new InputError(`${FLAG}: empty; expected metric=N% pairs like p99=10%,rps=5%`);
  const seen = new Set<string>();
  for (const part of text.split(',')) {
    const pair = part.trim();
    const match = /^([a-z0-9_]+)\s*=\s*(.*)$/i.exec(pair);
    if (!match) throw new InputError(`${FLAG}: '${pair}' is not metric=N% (e.g. p99=10%)`);
    const name = (match[1] as string).toLowerCase();
    const value = (match[2] as string).trim();
    if (!(METRICS as readonly string[]).includes(name))
      throw new InputError(`${FLAG}: unknown metric '${name}' (known: ${METRICS.join(', ')})`);
    if (seen.has(name)) throw new InputError(`${FLAG}: ${name} is given twice`);
    seen.add(name);
    if (value.startsWith('-'))
      throw new InputError(`${FLAG}: ${name}=${value}: a tolerance cannot be negative`);
    if (!value.endsWith('%')) throw new InputError(`${FLAG}: ${name}=${value}: missing %, e.g. ${name}=10%`);
    const number = value.slice(0, -1).trim();
    if (!/^\d+(\.\d+)?$/.test(number))
      throw new InputError(`${FLAG}: ${name}=${value}: '${number}' is not a number`);
    tolerances[name as Metric] = Number(number) / 100;
  }
  return tolerances;
}

/** `10%` for relative tolerances, `1 pt` for the rates' percentage points. */
export function describeTolerance(metric: Metric, value: number): string {
  const n = Number((value * 100).toFixed(4));
  return metric === 'errors' || metric === 'rate_limited' ? `${n} pt` : `${n}%`;
}
