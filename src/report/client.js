/*
 * The report's charts, drawn in the page with uPlot (inlined before this script) from the points in
 * #report-data, which the report computed in Node. Each chart container carries `data-chart` (its
 * id in the data) and, once drawn, `data-points`: tests and readers can tell a drawn chart from an
 * empty one. A chart that cannot be drawn says so in place of the canvas, never a blank box.
 */
(() => {
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
  };

  const data = JSON.parse(document.getElementById('report-data').textContent);
  const charts = new Map(data.charts.map((c) => [c.id, c]));

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

  const BUILD = { latency, timeline, waits };

  function noData(el, text) {
    const p = document.createElement('p');
    p.className = 'no-data';
    p.textContent = text;
    el.replaceChildren(p);
    el.dataset.points = '0';
  }

  const drawn = [];
  for (const el of document.querySelectorAll('[data-chart]')) {
    const chart = charts.get(el.dataset.chart);
    const points = chart ? (chart.kind === 'latency' ? chart.x.length : chart.t.length) : 0;
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

  let pending = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => {
      for (const [el, plot] of drawn) plot.setSize({ width: el.clientWidth, height: plot.height });
    });
  });
})();
