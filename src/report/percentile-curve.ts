import { decodeHistogram, type Histogram } from '../record/histogram.ts';

/**
 * Points of an HdrHistogram percentile-distribution plot: x is 1/(1-p) (1 at p=0, 10 at 90%, 100 at
 * 99%...), to be drawn on a log axis so that every "nine" gets the same width. Only these points go
 * into the report, not the histograms: a few dozen numbers per series instead of kilobytes of base64.
 */
export interface PercentileCurve {
  x: number[];
  /** ms; null where the series recorded nothing. */
  service: (number | null)[];
  response: (number | null)[];
}

/** Points per decade of 1/(1-p): smooth enough for a staircase of a few thousand values. */
const STEPS_PER_DECADE = 12;

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * With n values the finest percentile that means anything is 1-1/n, so x stops at n; there the
 * value is the maximum (a percentile just below 100% would still round to an earlier value).
 */
function grid(count: number): number[] {
  const xs: number[] = [];
  for (let k = 0; 10 ** (k / STEPS_PER_DECADE) < count; k++) xs.push(round(10 ** (k / STEPS_PER_DECADE), 4));
  xs.push(count);
  return xs;
}

function valuesAt(h: Histogram, xs: number[], last: number): (number | null)[] {
  if (h.totalCount === 0) return xs.map(() => null);
  return xs.map((x, i) => {
    const us = i === last ? h.maxValue : h.getValueAtPercentile(100 * (1 - 1 / x));
    return round(us / 1000, 3);
  });
}

/** Empty (no points) when neither histogram recorded anything. */
export function percentileCurve(histograms: { service: string; response: string }): PercentileCurve {
  const service = decodeHistogram(histograms.service);
  const response = decodeHistogram(histograms.response);
  const count = Math.max(service.totalCount, response.totalCount);
  if (count === 0) return { x: [], service: [], response: [] };
  const x = grid(count);
  return {
    x,
    service: valuesAt(service, x, x.length - 1),
    response: valuesAt(response, x, x.length - 1),
  };
}
