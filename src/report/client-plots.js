/*
 * The report's charts, drawn in the page with uPlot (inlined before this script) from the points in
 * #report-data, which the report computed in Node. Each chart container carries `data-chart` (its
 * id in the data) and, once drawn, `data-points`: tests and readers can tell a drawn chart from an
 * empty one. A chart that cannot be drawn says so in place of the canvas, never a blank box.
 *
 * The page loads client-plots.js, client-quota.js and client.js as one module (assets.ts joins
 * them): their names stay out of the page's global scope, where uPlot's is.
 *
 * Every legend reads without a mouse: with no point under the cursor (on load, in print, once the
 * cursor leaves) each entry shows the whole run's figure (a total, the run's percentile, the last
 * value), and the value under the cursor while there is one.
 */
const HEIGHT = 260;
const COLORS = {
  service: '#2563eb',
  response: '#d97706',
  requests: '#2563eb',
  rateLimited: '#dc2626',
  errors: '#7c3aed',
  p99: '#d97706',
  pacing: '#0891b2',
  backoff: '#db2777',
  remaining: '#059669',
  remainingMin: 'rgba(5,150,105,0.45)',
  pause: 'rgba(220,38,38,0.13)',
  pauseEdge: 'rgba(220,38,38,0.55)',
  reset: '#7c3aed',
};

const fixed = (v, digits) => (v == null ? '–' : Number(v.toFixed(digits)).toString());
const msText = (_u, v) => (v == null ? '–' : `${fixed(v, 3)} ms`);

/** The percentile an x of 1/(1-p) stands for: 10 -> 90%, 1000 -> 99.9%. */
function percentileText(x) {
  if (x == null) return '–';
  const p = 100 * (1 - 1 / x);
  const nines = Math.max(0, Math.ceil(Math.log10(x)) - 2);
  return `${Number(p.toFixed(Math.min(nines + 1, 6)))}%`;
}

/** A legend value: `whole` with no point under the cursor, else `text` of the value pointed at. */
const orWhole = (whole, text) => (u, v, si, idx) => (idx == null ? whole : text(u, v, si, idx));

/** A legend value that, with no point under the cursor, shows the one at index `at` (a chart's reading point). */
const orAt = (at, text) => (u, v, si, idx) =>
  idx == null ? text(u, u.data[si][at], si, at) : text(u, v, si, idx);

const sum = (values) => values.reduce((n, v) => n + (v ?? 0), 0);

/** Wait totals: ms below a second, then seconds (as the report's tables write them). */
const durationText = (msTotal) =>
  msTotal < 1000 ? `${fixed(msTotal, 0)} ms` : `${fixed(msTotal / 1000, 1)} s`;

const fromZero = (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1];

/** Ticks at the powers of ten only: the "nines" (0%, 90%, 99%, 99.9%...). */
function decades(_u, _axis, min, max) {
  const ticks = [];
  for (let v = 1; v <= max * 1.000001; v *= 10) if (v >= min * 0.999999) ticks.push(v);
  return ticks;
}

const line = (label, color, scale, extra) => ({
  label,
  scale,
  stroke: color,
  width: 2,
  ...extra,
});

function latency(chart, width) {
  // A line needs two points; a single response would otherwise leave only axes. Service time is
  // drawn wider and response time over it, thinner: where they are equal both stay visible.
  const few = chart.x.length < 3;
  // Without a cursor the legend reads at 99% (or the largest percentile a short run has).
  const at99 = chart.x.findIndex((x) => x >= 100);
  const at = at99 < 0 ? chart.x.length - 1 : at99;
  return [
    {
      width,
      height: HEIGHT,
      scales: {
        x: {
          time: false,
          distr: 3,
          log: 10,
          // A little room left of 0% (x = 1), so that a point there is not cut in half by the axis.
          range: (_u, _min, max) => [0.9, Math.max(10, 10 ** Math.ceil(Math.log10(max) - 1e-9))],
        },
        ms: { range: fromZero },
      },
      axes: [
        { label: 'percentile', splits: decades, values: (_u, ticks) => ticks.map(percentileText) },
        { scale: 'ms', label: 'latency (ms)', size: 60 },
      ],
      series: [
        { label: 'percentile', value: orAt(at, (_u, x) => percentileText(x)) },
        line('service time', COLORS.service, 'ms', {
          value: orAt(at, msText),
          width: 3,
          points: { show: few, size: 11 },
        }),
        line('response time', COLORS.response, 'ms', {
          value: orAt(at, msText),
          width: 1.5,
          dash: [6, 4],
          points: { show: few, size: 5 },
        }),
      ],
    },
    [chart.x, chart.service, chart.response],
  ];
}

/** Buckets are whole seconds: no tick between them. */
const SECOND_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400];
const secondsAxis = {
  time: false,
  range: (_u, min, max) => [min, Math.max(max, min + 1)],
};
const secondText = (_u, v) => (v == null ? '–' : `${v} s`);
const countText = (_u, v) => (v == null ? '–' : String(v));

/** The x entry of a per-second legend with no second pointed at. */
const WHOLE = 'whole run';
const wholeSeconds = orWhole(WHOLE, secondText);
const total = (values) => orWhole(`${sum(values)} in all`, countText);

function timeline(chart, width) {
  const s = chart.series;
  return [
    {
      width,
      height: HEIGHT,
      cursor: { sync: { key: 'timeline' } },
      scales: { x: secondsAxis, n: { range: fromZero }, ms: { range: fromZero } },
      axes: [
        { label: 'seconds since start', incrs: SECOND_STEPS },
        { scale: 'n', label: 'per second', size: 55 },
        { scale: 'ms', side: 1, label: 'p99 (ms)', size: 60, grid: { show: false } },
      ],
      series: [
        { label: 'second', value: wholeSeconds },
        line('requests', COLORS.requests, 'n', { value: total(s.requests), fill: 'rgba(37,99,235,0.08)' }),
        line('429', COLORS.rateLimited, 'n', { value: total(s.rateLimited) }),
        line('errors', COLORS.errors, 'n', { value: total(s.errors) }),
        line('p99 service', COLORS.p99, 'ms', {
          value: orWhole(msText(null, chart.wholeP99), msText),
          dash: [6, 4],
        }),
      ],
    },
    [chart.t, s.requests, s.rateLimited, s.errors, s.p99],
  ];
}

function waits(chart, width) {
  const s = chart.series;
  return [
    {
      width,
      height: Math.round(HEIGHT * 0.8),
      cursor: { sync: { key: 'timeline' } },
      scales: { x: secondsAxis, ms: { range: fromZero } },
      axes: [
        { label: 'seconds since start', incrs: SECOND_STEPS },
        { scale: 'ms', label: 'wait (ms, all VUs)', size: 70 },
      ],
      series: [
        { label: 'second', value: wholeSeconds },
        line('pacing wait', COLORS.pacing, 'ms', {
          value: orWhole(`${durationText(sum(s.pacingWaitMs))} in all`, msText),
          fill: 'rgba(8,145,178,0.1)',
        }),
        line('backoff wait', COLORS.backoff, 'ms', {
          value: orWhole(`${durationText(sum(s.backoffWaitMs))} in all`, msText),
          fill: 'rgba(219,39,119,0.1)',
        }),
      ],
    },
    [chart.t, s.pacingWaitMs, s.backoffWaitMs],
  ];
}

/** Ticks at the powers of two: the ramp doubles its tenants. */
function doublings(_u, _axis, min, max) {
  const ticks = [];
  for (let v = 1; v <= max * 1.000001; v *= 2) if (v >= min * 0.999999) ticks.push(v);
  return ticks;
}

/** A step threshold on p99, drawn across the chart as a dashed line. */
function limitLine(limit) {
  return (u) => {
    if (limit == null) return;
    const { ctx } = u;
    const { left, width } = u.bbox;
    const y = Math.round(u.valToPos(limit, 'ms', true));
    ctx.save();
    ctx.strokeStyle = COLORS.rateLimited;
    ctx.lineWidth = devicePixelRatio;
    ctx.setLineDash([4 * devicePixelRatio, 4 * devicePixelRatio]);
    ctx.beginPath();
    ctx.moveTo(left, y);
    ctx.lineTo(left + width, y);
    ctx.stroke();
    ctx.restore();
  };
}

/** capacity --tenants: p50 and p99 (left) and the rate got and allowed (right), by tenants. */
function tenantRamp(chart, width) {
  const s = chart.series;
  const limit = chart.p99Limit;
  const rateText = (_u, v) => (v == null ? '–' : `${fixed(v, 1)}/s`);
  const dots = (size) => ({ show: true, size });
  // Without a cursor the legend reads at the largest step.
  const last = chart.tenants.length - 1;
  const broke = s.broke.filter((v) => v != null).length;
  return [
    {
      width,
      height: HEIGHT,
      scales: {
        x: {
          time: false,
          distr: 3,
          log: 2,
          range: (_u, min, max) => [Math.max(0.5, min / 1.25), Math.max(max * 1.25, min * 2)],
        },
        ms: { range: (_u, _min, max) => [0, Math.max(max, limit ?? 0) * 1.1 || 1] },
        n: { range: fromZero },
      },
      axes: [
        { label: 'tenants (each at its quota)', splits: doublings },
        { scale: 'ms', label: 'response time (ms)', size: 60 },
        { scale: 'n', side: 1, label: 'requests per second', size: 70, grid: { show: false } },
      ],
      series: [
        { label: 'tenants', value: orAt(last, countText) },
        line('p99', COLORS.p99, 'ms', { value: orAt(last, msText), points: dots(6) }),
        line('p50', COLORS.service, 'ms', { value: orAt(last, msText), width: 1.5, points: dots(4) }),
        line('requests/s', COLORS.remaining, 'n', { value: orAt(last, rateText), points: dots(4) }),
        line('quota allows', COLORS.remainingMin, 'n', {
          value: orAt(last, rateText),
          width: 1,
          dash: [2, 4],
        }),
        {
          label: 'broke',
          scale: 'ms',
          stroke: COLORS.rateLimited,
          fill: COLORS.rateLimited,
          paths: () => null,
          points: { show: true, size: 11, fill: COLORS.rateLimited },
          value: orWhole(`${broke} of ${chart.tenants.length} steps`, (_u, v) => (v == null ? '–' : 'broke')),
        },
      ],
      hooks: { draw: [limitLine(limit)] },
    },
    [chart.tenants, s.p99, s.p50, s.rate, s.offered, s.broke],
  ];
}

/** One line per operation, the busiest few shown; a legend entry shows (or hides) its operation. */
const OPERATION_COLORS = [
  '#2563eb',
  '#d97706',
  '#059669',
  '#dc2626',
  '#7c3aed',
  '#0891b2',
  '#db2777',
  '#65a30d',
  '#475569',
  '#a16207',
];

/**
 * One percentile of each operation's service time per second. A second without a response of an
 * operation has no percentile: its line joins the seconds around it (a rare operation would
 * otherwise be lone dots), and each second with one is marked while the points are few.
 */
function operationLatency(chart, width) {
  return [
    {
      width,
      height: HEIGHT,
      cursor: { sync: { key: 'timeline' } },
      scales: { x: secondsAxis, ms: { range: fromZero } },
      axes: [
        { label: 'seconds since start', incrs: SECOND_STEPS },
        { scale: 'ms', label: `${chart.percentile} service time (ms)`, size: 60 },
      ],
      series: [
        { label: 'second', value: wholeSeconds },
        ...chart.lines.map((l, i) =>
          line(l.operation, OPERATION_COLORS[i % OPERATION_COLORS.length], 'ms', {
            show: l.shown,
            spanGaps: true,
            width: 1.5,
            value: orWhole(msText(null, l.whole), msText),
          }),
        ),
      ],
    },
    [chart.t, ...chart.lines.map((l) => l.values)],
  ];
}

/** Each chart kind's builder: (chart, width) -> [uPlot options, columns]. client-quota.js adds its own. */
// biome-ignore lint/correctness/noUnusedVariables: client.js reads it (assets.ts joins the files into one module).
const BUILD = {
  latency,
  timeline,
  waits,
  'tenant-ramp': tenantRamp,
  'operation-latency': operationLatency,
};
