/*
 * Draws the charts the builders of client-plots.js and client-quota.js describe, and keeps them the
 * width of their cards: on a resize, when another operation's percentile chart is picked, and for print.
 */

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

/** Each chart redrawn at its container's width (a hidden one, with no width, is left as it is). */
function fitAll(drawn) {
  for (const [el, plot] of drawn)
    if (el.clientWidth > 0) plot.setSize({ width: el.clientWidth, height: plot.height });
}

/** Charts take their container's new width, once per frame however many resize events come. */
function followResize(drawn) {
  let pending = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => fitAll(drawn));
  });
}

/**
 * Printed, each chart is redrawn at its card's width on the page, and at the screen's after. The
 * print media query changes once the page is laid out for print (beforeprint comes before that). A
 * print that tells the page nothing still fits: the print stylesheet scales each canvas to its card.
 */
function followPrint(drawn) {
  window.matchMedia('print').addEventListener('change', () => fitAll(drawn));
  window.addEventListener('afterprint', () => fitAll(drawn));
}

const data = JSON.parse(document.getElementById('report-data').textContent);
const drawn = drawCharts(new Map(data.charts.map((c) => [c.id, c])));
followLatencyPicker(drawn);
followResize(drawn);
followPrint(drawn);
