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
const SPLIT_LINE = { lineStyle: { color: '#eef0f4' } };

function formatValue(value: number, percent: boolean): string {
  if (percent) return `${(value * 100).toFixed(1)}%`;
  const size = Math.abs(value);
  if (size !== 0 && (size < 1e-3 || size >= 1e5)) return value.toExponential(2);
  return String(Number(value.toPrecision(4)));
}

function lineSeries(line: LineSpec) {
  const base = {
    name: line.name,
    type: 'line',
    data: line.data,
    yAxisIndex: line.rightAxis ? 1 : 0,
    color: line.color,
  };
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
      return { ...base, symbol: 'circle', symbolSize: 7, lineStyle: { width: 2 }, z: 3 };
    case 'compare':
      return { ...base, symbol: 'emptyCircle', symbolSize: 5, lineStyle: { width: 1.5, type: 'dashed' }, z: 2 };
  }
}

export function countPoints(lines: readonly LineSpec[]): number {
  return lines.reduce((sum, line) => sum + line.data.length, 0);
}

export function lineChartOption(spec: LineChartSpec) {
  const percent = spec.percent ?? false;
  const hasData = countPoints(spec.lines) > 0;
  const yAxis = (name: string, right = false) => ({
    type: 'value',
    name,
    position: right ? 'right' : 'left',
    nameTextStyle: { color: '#667085', fontSize: 11, align: right ? 'right' : 'left' },
    scale: !percent && !spec.zeroBased,
    min: percent || spec.zeroBased ? 0 : undefined,
    max: percent ? 1 : undefined,
    axisLabel: { ...AXIS_LABEL, formatter: (value: number) => formatValue(value, percent) },
    splitLine: right ? { show: false } : SPLIT_LINE,
  });
  return {
    animation: false,
    grid: { left: 52, right: spec.rightName ? 56 : 18, top: 40, bottom: 34 },
    legend: {
      top: 4,
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
  return {
    animation: false,
    grid: { left: 70, right: 90, top: 16, bottom: 56 },
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
      nameGap: 50,
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
