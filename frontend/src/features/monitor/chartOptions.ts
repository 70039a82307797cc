// ECharts options for the monitor's curves, the confusion matrix and the pie/bar charts. Pure
// (plain objects), so they can be checked without a canvas.
import type { Point } from './series';

export type LineKind = 'steps' | 'epochs' | 'compare';

export interface LineSpec {
  name: string;
  data: Point[];
  kind: LineKind;
  color: string;
  /** A second y axis on the right (speed chart: epoch time next to samples/s). */
  rightAxis?: boolean;
}

export interface LineChartSpec {
  lines: LineSpec[];
  xName: string;
  yName: string;
  rightName?: string;
  percent?: boolean;
  /** The x axis reaches at least this far (the planned epochs), so it does not rescale as points come. */
  xMax?: number | null;
  /** Start the y axis at 0 (speed, memory) instead of fitting the data's range. */
  zeroBased?: boolean;
  emptyText: string;
}

const AXIS_LABEL = { color: '#667085', fontSize: 11 };

/** About how wide a label is drawn, in pixels: CJK characters are square, Latin ones about 0.62
 * of the font size (the canvas measures nothing before the chart is drawn). */
export function labelWidth(text: string, fontSize: number): number {
  let width = 0;
  for (const char of text) width += /[\u2e80-\u9fff\uff00-\uffef]/u.test(char) ? fontSize : fontSize * 0.62;
  return Math.ceil(width);
}
const SPLIT_LINE = { lineStyle: { color: '#eef0f4' } };

function formatValue(value: number, percent: boolean): string {
  if (percent) return `${(value * 100).toFixed(1)}%`;
  const size = Math.abs(value);
  if (size !== 0 && (size < 1e-3 || size >= 1e5)) return value.toExponential(2);
  return String(Number(value.toPrecision(4)));
}

const SPLITS = 5;

/** ECharts' nice(): 1, 2, 3, 5 or 10 times a power of ten (its tick interval for span / splits). */
export function niceStep(value: number): number {
  const exp10 = 10 ** Math.floor(Math.log10(value));
  const f = value / exp10;
  const nice = f < 1.5 ? 1 : f < 2.5 ? 2 : f < 4 ? 3 : f < 7 ? 5 : 10;
  return Number((nice * exp10).toPrecision(12));
}

/**
 * One formatter for every label of an axis, from the range its ticks cover: the same decimals on
 * each (so "0.10, 0.15, 0.20", never "0.1, 0.15, 0.2"), percentages alike, and exponent form for
 * the whole axis when its values are tiny or huge. `values` are the data on the axis; the tick
 * step is the one ECharts picks for their extent (SPLITS intervals).
 */
export function axisFormatter(
  values: readonly number[],
  { percent = false, zeroBased = false }: { percent?: boolean; zeroBased?: boolean } = {},
): (value: number) => string {
  const finite = values.filter(Number.isFinite);
  let lo = percent ? 0 : Math.min(...finite, ...(zeroBased ? [0] : []));
  let hi = percent ? 1 : Math.max(...finite, ...(zeroBased ? [0] : []));
  if (!finite.length && !percent) [lo, hi] = [0, 1];
  // As ECharts does with a single value: the axis spans half of it on each side.
  const span = hi - lo || Math.abs(hi) || 1;
  const step = niceStep((percent ? span * 100 : span) / SPLITS);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  if (percent) return (value) => `${(value * 100).toFixed(decimals)}%`;
  const size = Math.max(Math.abs(lo), Math.abs(hi));
  if (size >= 1e5 || (size > 0 && size < 1e-3)) {
    // Mantissa decimals enough for the step at the axis's magnitude.
    const digits = Math.max(0, Math.floor(Math.log10(size)) - Math.floor(Math.log10(step)));
    return (value) => (value === 0 ? '0' : value.toExponential(Math.min(digits, 3)));
  }
  return (value) => value.toFixed(decimals);
}

function lineSeries(line: LineSpec) {
  const base = {
    name: line.name,
    type: 'line',
    data: line.data,
    yAxisIndex: line.rightAxis ? 1 : 0,
    color: line.color,
  };
  if (line.data.length === 1) {
    // A one-epoch run has one point per curve, and a line of one point is a speck: draw a marker.
    return {
      ...base,
      showSymbol: true,
      symbol: line.kind === 'compare' ? 'emptyDiamond' : 'circle',
      symbolSize: line.kind === 'steps' ? 6 : 11,
      lineStyle: { width: 2 },
      itemStyle: { opacity: 1 },
      z: line.kind === 'epochs' ? 3 : 2,
    };
  }
  switch (line.kind) {
    case 'steps':
      // Many noisy points: a thin translucent line under the epoch points (dots while still few).
      return {
        ...base,
        showSymbol: line.data.length < 40,
        symbolSize: 3,
        lineStyle: { width: 1, opacity: 0.55 },
        itemStyle: { opacity: 0.55 },
        z: 1,
        sampling: 'lttb',
      };
    case 'epochs':
      return { ...base, showSymbol: true, symbol: 'circle', symbolSize: 7, lineStyle: { width: 2 }, z: 3 };
    case 'compare':
      return {
        ...base,
        showSymbol: true,
        symbol: 'emptyCircle',
        symbolSize: 5,
        lineStyle: { width: 1.5, type: 'dashed' },
        z: 2,
      };
  }
}

export function countPoints(lines: readonly LineSpec[]): number {
  return lines.reduce((sum, line) => sum + line.data.length, 0);
}

/** The legend's band at the top; the plot (and every axis name) stays below it. */
const LEGEND_TOP = 4;
const LEGEND_HEIGHT = 18;

export function lineChartOption(spec: LineChartSpec) {
  const percent = spec.percent ?? false;
  const hasData = countPoints(spec.lines) > 0;
  const yAxis = (name: string, right = false) => {
    const values = spec.lines
      .filter((line) => !!line.rightAxis === right)
      .flatMap((line) => line.data.map((p) => p[1]));
    return {
      type: 'value',
      name,
      // Along the axis, rotated: an axis name above the plot would sit in the legend's band.
      nameLocation: 'middle',
      nameGap: right ? 40 : 42,
      nameRotate: right ? -90 : 90,
      nameTextStyle: { color: '#667085', fontSize: 11 },
      scale: !percent && !spec.zeroBased,
      min: percent || spec.zeroBased ? 0 : undefined,
      max: percent ? 1 : undefined,
      splitNumber: SPLITS,
      axisLabel: { ...AXIS_LABEL, formatter: axisFormatter(values, { percent, zeroBased: spec.zeroBased }) },
      splitLine: right ? { show: false } : SPLIT_LINE,
    };
  };
  return {
    animation: false,
    grid: { left: 62, right: spec.rightName ? 62 : 18, top: LEGEND_TOP + LEGEND_HEIGHT + 12, bottom: 34 },
    legend: {
      top: LEGEND_TOP,
      height: LEGEND_HEIGHT,
      left: 'center',
      itemWidth: 14,
      itemHeight: 8,
      textStyle: { fontSize: 11, color: '#475467' },
      type: 'scroll',
    },
    tooltip: {
      trigger: 'axis',
      axisPointer: { type: 'line' },
      valueFormatter: (value: unknown) => (typeof value === 'number' ? formatValue(value, percent) : String(value)),
    },
    xAxis: {
      type: 'value',
      name: spec.xName,
      nameLocation: 'middle',
      nameGap: 22,
      nameTextStyle: { color: '#667085', fontSize: 11 },
      min: 0,
      max: (extent: { max: number }) => Math.max(Math.ceil(extent.max), spec.xMax ?? 1),
      minInterval: 1,
      axisLabel: AXIS_LABEL,
      splitLine: SPLIT_LINE,
    },
    yAxis: spec.rightName ? [yAxis(spec.yName), yAxis(spec.rightName, true)] : [yAxis(spec.yName)],
    series: spec.lines.map(lineSeries),
    graphic: hasData
      ? undefined
      : { type: 'text', left: 'center', top: 'middle', style: { text: spec.emptyText, fill: '#98a2b3', fontSize: 13 } },
  };
}

/** Row shares of a confusion matrix (each true class sums to 1; empty rows stay 0). */
export function rowShares(matrix: readonly (readonly number[])[]): number[][] {
  return matrix.map((row) => {
    const total = row.reduce((a, b) => a + b, 0);
    return row.map((value) => (total ? value / total : 0));
  });
}

export function confusionOption(
  matrix: readonly (readonly number[])[],
  classes: readonly string[],
  labels: { predicted: string; actual: string },
  normalized: boolean,
) {
  const values = normalized ? rowShares(matrix) : matrix.map((row) => [...row]);
  const data: [number, number, number][] = [];
  let max = 0;
  values.forEach((row, y) =>
    row.forEach((value, x) => {
      data.push([x, y, value]);
      if (value > max) max = value;
    }),
  );
  const showLabels = classes.length <= 20;
  const format = (value: number) => (normalized ? `${Math.round(value * 100)}%` : String(value));
  // The class names beside the rows, then the axis name: as wide as the longest name needs.
  const names = Math.max(24, ...classes.map((name) => labelWidth(name, AXIS_LABEL.fontSize)));
  const nameGap = names + 14;
  return {
    animation: false,
    grid: { left: nameGap + 20, right: 90, top: 16, bottom: 56 },
    tooltip: {
      formatter: (params: { value: [number, number, number] }) => {
        const [x, y, value] = params.value;
        return `${labels.actual}: <b>${classes[y] ?? y}</b><br/>${labels.predicted}: <b>${classes[x] ?? x}</b><br/>${format(value)}`;
      },
    },
    xAxis: {
      type: 'category',
      data: classes,
      name: labels.predicted,
      nameLocation: 'middle',
      nameGap: 32,
      splitArea: { show: true },
      axisLabel: { ...AXIS_LABEL, interval: 0, rotate: classes.length > 12 ? 45 : 0 },
    },
    yAxis: {
      type: 'category',
      data: classes,
      name: labels.actual,
      nameLocation: 'middle',
      nameGap,
      inverse: true,
      splitArea: { show: true },
      axisLabel: { ...AXIS_LABEL, interval: 0 },
    },
    visualMap: {
      min: 0,
      max: max || 1,
      calculable: true,
      orient: 'vertical',
      right: 8,
      top: 'center',
      itemHeight: 160,
      inRange: { color: ['#f5f7ff', '#a5b4fc', '#4f46e5', '#1e1b4b'] },
      formatter: (value: number) => format(value),
      textStyle: { fontSize: 11, color: '#667085' },
    },
    series: [
      {
        type: 'heatmap',
        data,
        label: {
          show: showLabels,
          fontSize: 11,
          formatter: (p: { value: [number, number, number] }) => (p.value[2] ? format(p.value[2]) : ''),
        },
        emphasis: { itemStyle: { borderColor: '#111827', borderWidth: 1 } },
      },
    ],
  };
}

// --- regression results -------------------------------------------------------------------------

/** report.json "scatter": (actual, predicted) pairs of the test set (at most 2000, evenly spaced). */
export interface ScatterReport {
  actual: number[];
  predicted: number[];
  /** Test samples in all (more than the pairs when they were thinned). */
  total: number;
}

/** report.json "residuals": a histogram of predicted - actual over the test set. */
export interface ResidualsReport {
  edges: number[];
  counts: number[];
  mean: number;
  std: number;
}

/** The finite (actual, predicted) pairs and the range both axes share (y = x is the diagonal). */
export function scatterPoints(scatter: ScatterReport): { points: Point[]; lo: number; hi: number; step: number } {
  const points: Point[] = [];
  const n = Math.min(scatter.actual.length, scatter.predicted.length);
  for (let i = 0; i < n; i += 1) {
    const x = scatter.actual[i]!;
    const y = scatter.predicted[i]!;
    if (Number.isFinite(x) && Number.isFinite(y)) points.push([x, y]);
  }
  if (!points.length) return { points, lo: 0, hi: 1, step: 0.2 };
  let lo = Infinity;
  let hi = -Infinity;
  for (const [x, y] of points) {
    lo = Math.min(lo, x, y);
    hi = Math.max(hi, x, y);
  }
  // A little room around the extremes, so no point sits on the frame; one value gets a span. The
  // ends are then rounded out to ECharts' tick step, so both axes have the same round labels.
  const pad = (hi - lo) * 0.04 || Math.abs(hi) * 0.5 || 1;
  const step = niceStep((hi - lo + 2 * pad) / SPLITS);
  return { points, lo: Math.floor((lo - pad) / step) * step, hi: Math.ceil((hi + pad) / step) * step, step };
}

export function scatterOption(
  scatter: ScatterReport,
  labels: { actual: string; predicted: string; identity: string; empty: string },
) {
  const { points, lo, hi, step } = scatterPoints(scatter);
  const values = [lo, hi];
  const axis = (name: string, gap: number) => ({
    type: 'value',
    name,
    nameLocation: 'middle',
    nameGap: gap,
    nameTextStyle: { color: '#667085', fontSize: 11 },
    // Both axes span the same range: the y = x line is the square's diagonal.
    min: lo,
    max: hi,
    interval: step,
    axisLabel: { ...AXIS_LABEL, formatter: axisFormatter(values) },
    splitLine: SPLIT_LINE,
  });
  const format = axisFormatter(values);
  return {
    animation: false,
    grid: { left: 62, right: 18, top: LEGEND_TOP + LEGEND_HEIGHT + 12, bottom: 40 },
    legend: {
      top: LEGEND_TOP,
      height: LEGEND_HEIGHT,
      left: 'center',
      itemWidth: 14,
      itemHeight: 8,
      textStyle: { fontSize: 11, color: '#475467' },
    },
    tooltip: {
      trigger: 'item',
      formatter: (p: { seriesType: string; value: Point }) =>
        p.seriesType === 'scatter'
          ? `${labels.actual}: <b>${format(p.value[0])}</b><br/>${labels.predicted}: <b>${format(p.value[1])}</b>`
          : labels.identity,
    },
    xAxis: axis(labels.actual, 26),
    yAxis: axis(labels.predicted, 46),
    series: [
      {
        name: labels.predicted,
        type: 'scatter',
        data: points,
        // Many points: smaller and lighter, so dense regions still read as dense.
        symbolSize: points.length > 500 ? 4 : 7,
        itemStyle: { color: '#4f46e5', opacity: points.length > 500 ? 0.45 : 0.7 },
        z: 2,
      },
      {
        name: labels.identity,
        type: 'line',
        data: [
          [lo, lo],
          [hi, hi],
        ],
        showSymbol: false,
        silent: true,
        color: '#ea580c',
        lineStyle: { width: 1.5, type: 'dashed' },
        z: 1,
      },
    ],
    graphic: points.length
      ? undefined
      : { type: 'text', left: 'center', top: 'middle', style: { text: labels.empty, fill: '#98a2b3', fontSize: 13 } },
  };
}

/** One bar per histogram bin: its range and count (edges has one more entry than counts). */
export function histogramBins(residuals: ResidualsReport): { from: number; to: number; count: number }[] {
  const { edges, counts } = residuals;
  if (edges.length !== counts.length + 1) return [];
  return counts.map((count, i) => ({ from: edges[i]!, to: edges[i + 1]!, count }));
}

/**
 * Labels for bin centres and ranges: one decimal finer than the bin width, so neighbouring bins
 * never read the same (numpy's edges are arbitrary floats: min + k * width).
 */
export function binFormatter(bins: readonly { from: number; to: number }[]): (value: number) => string {
  const width = bins.length ? Math.abs(bins[0]!.to - bins[0]!.from) : 0;
  if (!(width > 0) || !Number.isFinite(width)) return (value) => String(Number(value.toPrecision(3)));
  const decimals = Math.max(0, 1 - Math.floor(Math.log10(width)));
  if (decimals > 6 || Math.abs(bins[bins.length - 1]!.to) >= 1e6) return (value) => value.toExponential(2);
  return (value) => value.toFixed(decimals);
}

export function residualOption(residuals: ResidualsReport, labels: { residual: string; count: string; empty: string }) {
  const bins = histogramBins(residuals);
  const format = binFormatter(bins);
  const center = (bin: { from: number; to: number }) => (bin.from + bin.to) / 2;
  return {
    animation: false,
    grid: { left: 52, right: 18, top: 16, bottom: 40 },
    tooltip: {
      trigger: 'axis',
      axisPointer: { type: 'shadow' },
      formatter: (params: { dataIndex: number }[]) => {
        const bin = bins[params[0]?.dataIndex ?? -1];
        return bin
          ? `${labels.residual}: ${format(bin.from)} … ${format(bin.to)}<br/>${labels.count}: <b>${bin.count}</b>`
          : '';
      },
    },
    xAxis: {
      type: 'category',
      data: bins.map((bin) => format(center(bin))),
      name: labels.residual,
      nameLocation: 'middle',
      nameGap: 26,
      nameTextStyle: { color: '#667085', fontSize: 11 },
      axisLabel: { ...AXIS_LABEL, hideOverlap: true },
      axisTick: { alignWithLabel: true },
    },
    yAxis: {
      type: 'value',
      name: labels.count,
      nameLocation: 'middle',
      nameGap: 36,
      nameRotate: 90,
      nameTextStyle: { color: '#667085', fontSize: 11 },
      minInterval: 1,
      axisLabel: AXIS_LABEL,
      splitLine: SPLIT_LINE,
    },
    series: [
      {
        type: 'bar',
        data: bins.map((bin) => ({
          value: bin.count,
          // The bins around zero error in the main colour, the tails lighter: where the model misses.
          itemStyle: { color: bin.from <= 0 && bin.to >= 0 ? '#4f46e5' : '#a5b4fc' },
        })),
        barCategoryGap: '8%',
      },
    ],
    graphic: bins.length
      ? undefined
      : { type: 'text', left: 'center', top: 'middle', style: { text: labels.empty, fill: '#98a2b3', fontSize: 13 } },
  };
}
