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
      value: orWhole(
        `${chart.pauses.length} in all`,
        inSecond((t) => (heldAt(t) ? 'held' : '–')),
      ),
    },
  ];
  // Without a quota announced there is no window to see begin.
  if (announced)
    marks.push({
      label: 'window reset',
      stroke: COLORS.reset,
      dash: [5, 4],
      paths: () => null,
      value: orWhole(
        `${chart.resets.length} in all`,
        inSecond((t) => (chart.resets.includes(t) ? 'new window' : '–')),
      ),
    });
  return marks;
}

function quota(chart, width) {
  const s = chart.series;
  const announced = chart.limit != null || s.remaining.some((v) => v != null);
  const top = s.remaining.reduce((max, v) => Math.max(max, v ?? 0), Math.max(chart.limit ?? 0, 1));
  const series = [{ label: 'second', value: wholeSeconds }];
  const columns = [chart.t];
  const axes = [{ label: 'seconds since start', incrs: SECOND_STEPS }];
  if (announced) {
    // The run's last announcement, and its lowest: what was left, and how close it came to none.
    const told = s.remaining.filter((v) => v != null);
    const lowest = s.remainingMin.filter((v) => v != null);
    const last = told.length ? `${told[told.length - 1]} at the end` : '–';
    const least = lowest.length ? `${lowest.reduce((m, v) => Math.min(m, v))} at least` : '–';
    series.push(steps('Remaining', COLORS.remaining, 'q', { value: orWhole(last, countText), width: 2.5 }));
    series.push(
      steps('lowest in the second', COLORS.remainingMin, 'q', { value: orWhole(least, countText), width: 1 }),
    );
    columns.push(s.remaining, s.remainingMin);
    axes.push({ scale: 'q', label: 'Remaining', size: 60 });
  }
  const fill = 'rgba(37,99,235,0.08)';
  series.push(steps('requests/s', COLORS.requests, 'n', { value: total(s.requests), width: 1, fill }));
  series.push(steps('429/s', COLORS.rateLimited, 'n', { value: total(s.rateLimited), width: 1.5 }));
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

BUILD.quota = quota;
