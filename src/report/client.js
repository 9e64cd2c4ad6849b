/*
 * The report's charts, drawn in the page with uPlot (inlined before this script) from the points in
 * #report-data, which the report computed in Node. Each chart container carries `data-chart` (its
 * id in the data) and, once drawn, `data-points`: tests and readers can tell a drawn chart from an
 * empty one. A chart that cannot be drawn says so in place of the canvas, never a blank box.
 *
 * The page loads it as a module: its names stay out of the page's global scope, where uPlot's is.
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
        { label: 'percentile', value: (_u, x) => percentileText(x) },
        line('service time', COLORS.service, 'ms', {
          value: msText,
          width: 3,
          points: { show: few, size: 11 },
        }),
        line('response time', COLORS.response, 'ms', {
          value: msText,
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
        { label: 'second', value: secondText },
        line('requests', COLORS.requests, 'n', { value: countText, fill: 'rgba(37,99,235,0.08)' }),
        line('429', COLORS.rateLimited, 'n', { value: countText }),
        line('errors', COLORS.errors, 'n', { value: countText }),
        line('p99 service', COLORS.p99, 'ms', { value: msText, dash: [6, 4] }),
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
        { label: 'second', value: secondText },
        line('pacing wait', COLORS.pacing, 'ms', { value: msText, fill: 'rgba(8,145,178,0.1)' }),
        line('backoff wait', COLORS.backoff, 'ms', { value: msText, fill: 'rgba(219,39,119,0.1)' }),
      ],
    },
    [chart.t, s.pacingWaitMs, s.backoffWaitMs],
  ];
}

/**
 * Each value holds for its whole second, [t, t+1): a step per second, with no line across a
 * second that has no value (nothing was announced in it). uPlot's stepped builder ends a run at its
 * last point, which would hide a lone second, so the steps are drawn here.
 */
function secondSteps(u, si, idx0, idx1) {
  const xs = u.data[0];
  const ys = u.data[si];
  const scale = u.series[si].scale;
  const stroke = new Path2D();
  const fill = u.series[si].fill ? new Path2D() : null;
  const zero = u.valToPos(0, scale, true);
  let runStart = null;
  let lastX = 0;
  for (let i = idx0; i <= idx1; i++) {
    const v = ys[i];
    if (v == null) {
      if (fill && runStart != null) fill.lineTo(lastX, zero);
      runStart = null;
      continue;
    }
    const x0 = u.valToPos(xs[i], 'x', true);
    const x1 = u.valToPos(xs[i] + 1, 'x', true);
    const y = u.valToPos(v, scale, true);
    if (runStart == null) {
      stroke.moveTo(x0, y);
      fill?.moveTo(x0, zero);
      runStart = x0;
    } else stroke.lineTo(x0, y);
    stroke.lineTo(x1, y);
    fill?.lineTo(x0, y);
    fill?.lineTo(x1, y);
    lastX = x1;
  }
  if (fill && runStart != null) fill.lineTo(lastX, zero);
  return { stroke, fill, clip: null, band: null, gaps: null, flags: 0 };
}

/** Pauses shaded and resets marked under the series, each shown while its legend entry is on. */
function quotaMarks(chart, pauseSeries, resetSeries) {
  return (u) => {
    const { ctx } = u;
    const { top, height } = u.bbox;
    const x = (v) => u.valToPos(v, 'x', true);
    ctx.save();
    if (u.series[pauseSeries].show) {
      ctx.fillStyle = COLORS.pause;
      for (const [from, until] of chart.pauses)
        ctx.fillRect(x(from), top, Math.max(1, x(until) - x(from)), height);
    }
    if (u.series[resetSeries]?.show) {
      ctx.strokeStyle = COLORS.reset;
      // Two device pixels on a whole-pixel x: crisp, where 1.5 would blur into two half-covered columns.
      ctx.lineWidth = 2 * devicePixelRatio;
      ctx.setLineDash([5 * devicePixelRatio, 4 * devicePixelRatio]);
      ctx.beginPath();
      for (const t of chart.resets) {
        ctx.moveTo(Math.round(x(t)), top);
        ctx.lineTo(Math.round(x(t)), top + height);
      }
      ctx.stroke();
    }
    ctx.restore();
  };
}

const steps = (label, color, scale, extra) =>
  line(label, color, scale, { paths: secondSteps, points: { show: false }, ...extra });

/** The figures of a second under the cursor: a pause held in it, a window began in it. */
function quotaMarkSeries(chart, announced) {
  const heldAt = (t) => chart.pauses.some(([from, until]) => from < t + 1 && until > t);
  const inSecond = (pick) => (u, _v, _si, idx) => (idx == null ? '–' : pick(u.data[0][idx]));
  const marks = [
    {
      label: 'pause after a 429',
      stroke: COLORS.pauseEdge,
      fill: COLORS.pause,
      paths: () => null,
      value: inSecond((t) => (heldAt(t) ? 'held' : '–')),
    },
  ];
  // Without a quota announced there is no window to see begin.
  if (announced)
    marks.push({
      label: 'window reset',
      stroke: COLORS.reset,
      dash: [5, 4],
      paths: () => null,
      value: inSecond((t) => (chart.resets.includes(t) ? 'new window' : '–')),
    });
  return marks;
}

function quota(chart, width) {
  const s = chart.series;
  const announced = chart.limit != null || s.remaining.some((v) => v != null);
  const top = s.remaining.reduce((max, v) => Math.max(max, v ?? 0), Math.max(chart.limit ?? 0, 1));
  const series = [{ label: 'second', value: secondText }];
  const columns = [chart.t];
  const axes = [{ label: 'seconds since start', incrs: SECOND_STEPS }];
  if (announced) {
    series.push(steps('Remaining', COLORS.remaining, 'q', { value: countText, width: 2.5 }));
    series.push(steps('lowest in the second', COLORS.remainingMin, 'q', { value: countText, width: 1 }));
    columns.push(s.remaining, s.remainingMin);
    axes.push({ scale: 'q', label: 'Remaining', size: 60 });
  }
  const fill = 'rgba(37,99,235,0.08)';
  series.push(steps('requests/s', COLORS.requests, 'n', { value: countText, width: 1, fill }));
  series.push(steps('429/s', COLORS.rateLimited, 'n', { value: countText, width: 1.5 }));
  columns.push(s.requests, s.rateLimited);
  // The rate takes the right axis beside Remaining, the left one alone.
  axes.push({
    scale: 'n',
    side: announced ? 1 : 3,
    label: 'per second',
    size: 55,
    grid: { show: !announced },
  });
  const pauseSeries = series.length;
  for (const mark of quotaMarkSeries(chart, announced)) {
    series.push(mark);
    columns.push(chart.t.map(() => null));
  }
  return [
    {
      width,
      height: HEIGHT,
      cursor: { sync: { key: 'timeline' } },
      scales: {
        x: secondsAxis,
        q: { range: () => [0, top * 1.05] },
        n: { range: fromZero },
      },
      axes,
      series,
      hooks: { drawClear: [quotaMarks(chart, pauseSeries, announced ? pauseSeries + 1 : -1)] },
    },
    columns,
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
        { label: 'tenants', value: countText },
        line('p99', COLORS.p99, 'ms', { value: msText, points: dots(6) }),
        line('p50', COLORS.service, 'ms', { value: msText, width: 1.5, points: dots(4) }),
        line('requests/s', COLORS.remaining, 'n', { value: rateText, points: dots(4) }),
        line('quota allows', COLORS.remainingMin, 'n', { value: rateText, width: 1, dash: [2, 4] }),
        {
          label: 'broke',
          scale: 'ms',
          stroke: COLORS.rateLimited,
          fill: COLORS.rateLimited,
          paths: () => null,
          points: { show: true, size: 11, fill: COLORS.rateLimited },
          value: (_u, v) => (v == null ? '–' : 'broke'),
        },
      ],
      hooks: { draw: [limitLine(limit)] },
    },
    [chart.tenants, s.p99, s.p50, s.rate, s.offered, s.broke],
  ];
}

const BUILD = { latency, timeline, waits, quota, 'tenant-ramp': tenantRamp };

function noData(el, text) {
  const p = document.createElement('p');
  p.className = 'no-data';
  p.textContent = text;
  el.replaceChildren(p);
  el.dataset.points = '0';
}

/** How many points a chart has to draw. */
function pointsOf(chart) {
  if (!chart) return 0;
  if (chart.kind === 'latency') return chart.x.length;
  if (chart.kind === 'tenant-ramp') return chart.tenants.length;
  return chart.t.length;
}

/** Draws each chart container from its data; returns the [container, plot] pairs drawn. */
function drawCharts(charts) {
  const drawn = [];
  for (const el of document.querySelectorAll('[data-chart]')) {
    const chart = charts.get(el.dataset.chart);
    const points = pointsOf(chart);
    if (!chart || points === 0) {
      // The report already wrote why; a container it did not expect still must not stay blank.
      if (!el.querySelector('.no-data')) noData(el, 'no data');
      el.dataset.points = '0';
      continue;
    }
    try {
      el.replaceChildren();
      const [options, columns] = BUILD[chart.kind](chart, el.clientWidth || 600);
      drawn.push([el, new uPlot(options, columns, el)]);
      el.dataset.points = String(points);
    } catch (error) {
      noData(el, `chart not drawn: ${error.message}`);
      console.error(`chart ${el.dataset.chart}:`, error);
    }
  }
  return drawn;
}

/**
 * The percentile charts share one place: the list shows the one picked. A chart drawn while
 * hidden had no width to take, so it takes its card's width when it is shown.
 */
function followLatencyPicker(drawn) {
  const picker = document.querySelector('[data-latency-select]');
  picker?.addEventListener('change', () => {
    for (const panel of document.querySelectorAll('[data-latency-panel]'))
      panel.hidden = panel.dataset.latencyPanel !== picker.value;
    for (const [el, plot] of drawn)
      if (el.dataset.chart === picker.value) plot.setSize({ width: el.clientWidth, height: plot.height });
  });
}

/** Charts take their container's new width, once per frame however many resize events come. */
function followResize(drawn) {
  let pending = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => {
      for (const [el, plot] of drawn)
        if (el.clientWidth > 0) plot.setSize({ width: el.clientWidth, height: plot.height });
    });
  });
}

const data = JSON.parse(document.getElementById('report-data').textContent);
const drawn = drawCharts(new Map(data.charts.map((c) => [c.id, c])));
followLatencyPicker(drawn);
followResize(drawn);
