// What the sweep page draws, as pure data and ECharts options (checked without a canvas): the
// parallel coordinates of the trials, the best-so-far curve and the params' importance.
import { labelWidth } from '../monitor/chartOptions';
import { parseServerTime } from '../tasks/format';
import type { SweepDetail, Trial } from './api';

type Direction = SweepDetail['direction'];

export interface Axis {
  /** `node.param`, as the trials name it. */
  key: string;
  kind: 'number' | 'category';
  log: boolean;
  /** A choice axis: its values in the order of the search section. */
  values?: string[];
}

/** One axis per searched param, in the order of the graph's search section. */
export function searchAxes(search: SweepDetail['search']): Axis[] {
  const axes: Axis[] = [];
  for (const [nodeId, params] of Object.entries(search)) {
    for (const [param, spec] of Object.entries(params)) {
      const key = `${nodeId}.${param}`;
      if (spec.type === 'choice' && Array.isArray(spec.values)) {
        axes.push({ key, kind: 'category', log: false, values: spec.values.map(String) });
      } else axes.push({ key, kind: 'number', log: spec.log === true });
    }
  }
  return axes;
}

/** A param's value as a table shows it: reals with 3 significant digits, the rest as they are. */
export function formatParam(value: unknown): string {
  if (typeof value === 'number') {
    if (Number.isInteger(value)) return String(value);
    const size = Math.abs(value);
    return size !== 0 && (size < 1e-2 || size >= 1e4) ? value.toExponential(2) : String(Number(value.toPrecision(3)));
  }
  return String(value);
}

/** An objective value: a share in 0..1 as a percentage (accuracy), anything else with 4 digits. */
export function formatObjective(value: number | null | undefined, percent: boolean): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return percent ? `${(value * 100).toFixed(2)}%` : String(Number(value.toPrecision(4)));
}

export const isPercentObjective = (objective: string) => /accuracy$/.test(objective);

const better = (a: number, b: number, direction: Direction) => (direction === 'maximize' ? a > b : a < b);

/** The objective's last epoch value of a trial (null before its first epoch). */
export function lastValue(trial: Trial): number | null {
  const epochs = Object.keys(trial.intermediate).map(Number);
  if (!epochs.length) return null;
  return trial.intermediate[String(Math.max(...epochs))] ?? null;
}

/** [trial number, best objective of the complete trials up to it], one point per complete trial. */
export function bestSoFar(trials: readonly Trial[], direction: Direction): [number, number][] {
  const points: [number, number][] = [];
  let best: number | null = null;
  for (const trial of [...trials].sort((a, b) => a.number - b.number)) {
    if (trial.state !== 'COMPLETE' || trial.value === null) continue;
    if (best === null || better(trial.value, best, direction)) best = trial.value;
    points.push([shownNumber(trial.number), best]);
  }
  return points;
}

const AXIS_LABEL = { color: '#667085', fontSize: 11 };
const STATE_COLOURS: Record<Trial['state'], string> = {
  COMPLETE: '#4f46e5',
  PRUNED: '#cbd5e1',
  RUNNING: '#0891b2',
  FAILED: '#dc2626',
  STOPPED: '#94a3b8',
};

export interface ParallelLabels {
  objective: string;
  /** A state's name in the UI's language, for the legend. */
  state: (state: Trial['state']) => string;
  /** A searched param's name (`node · Param title`) from its `node.param` key; the key itself without. */
  param?: (key: string) => string;
}

/** The trials that have an objective value, each a line across the params' axes and the objective. */
export function parallelOption(detail: SweepDetail, labels: ParallelLabels) {
  const axes = searchAxes(detail.search);
  const percent = isPercentObjective(detail.objective);
  const trials = detail.trial_list.filter((trial) => trial.value !== null);
  const names = axes.map((axis) => (labels.param ? labels.param(axis.key) : axis.key));
  const parallelAxis = [
    ...axes.map((axis, dim) => ({
      dim,
      name: names[dim],
      type: axis.kind === 'category' ? 'category' : axis.log ? 'log' : 'value',
      data: axis.values,
      scale: axis.kind === 'number',
      nameTextStyle: { color: '#344054', fontSize: NAME_FONT_SIZE },
      axisLabel: { ...AXIS_LABEL, formatter: axis.kind === 'number' ? (v: number) => formatParam(v) : undefined },
    })),
    {
      dim: axes.length,
      name: labels.objective,
      type: 'value',
      scale: true,
      // A share stays within 0..100%, a little wider than the values (all alike: ECharts alone
      // would open the axis from 40% to 160%).
      ...(percent ? { min: shareFloor, max: shareCeil } : {}),
      nameTextStyle: { color: '#344054', fontSize: NAME_FONT_SIZE, fontWeight: 'bold' },
      axisLabel: { ...AXIS_LABEL, formatter: (v: number) => formatObjective(v, percent) },
    },
  ];
  const states = [...new Set(trials.map((trial) => trial.state))];
  const series = states.map((state) => ({
    name: labels.state(state),
    type: 'parallel',
    lineStyle: {
      width: state === 'COMPLETE' ? 2 : 1.2,
      opacity: state === 'PRUNED' ? 0.7 : 0.85,
      color: STATE_COLOURS[state],
    },
    emphasis: { lineStyle: { width: 3, opacity: 1 } },
    data: trials
      .filter((trial) => trial.state === state)
      .map((trial) => ({
        name: `#${shownNumber(trial.number)}`,
        value: [...axes.map((axis) => trial.params[axis.key] as number | string), trial.value as number],
      })),
  }));
  return {
    animation: false,
    legend: { bottom: 0, left: 'center', textStyle: { color: '#475467', fontSize: 11 } },
    // An axis name is centred over its axis: the outer axes get half their name's width beside
    // them, or "regressor-1 · Learning rate" is cut to "essor-1 · Learning rate".
    parallel: {
      left: Math.max(48, halfName(names[0] ?? labels.objective) + 8),
      right: Math.max(96, halfName(labels.objective) + 8),
      top: 36,
      bottom: 48,
    },
    parallelAxis,
    series,
  };
}

const NAME_FONT_SIZE = 11;
/** Half an axis name's drawn width (bold for the objective: a little wider than measured). */
const halfName = (name: string) => Math.ceil((labelWidth(name, NAME_FONT_SIZE) * 1.08) / 2);

const shareFloor = ({ min }: { min: number }) => Math.max(0, Math.floor((min - 0.02) * 20) / 20);
const shareCeil = ({ max }: { max: number }) => Math.min(1, Math.ceil((max + 0.02) * 20) / 20);

/** The next hundredth above a share (so a curve at 0.973 gets an axis up to 0.98, never past 1). */
const niceCeil = (value: number) => Math.ceil(value * 100 + 1e-9) / 100 + 0.01;

/** Each complete trial's objective and the best so far, against the trial number. */
export function bestSoFarOption(
  detail: SweepDetail,
  labels: { trial: string; value: string; best: string; trials: string },
) {
  const percent = isPercentObjective(detail.objective);
  const complete = detail.trial_list.filter((trial) => trial.state === 'COMPLETE' && trial.value !== null);
  const best = bestSoFar(detail.trial_list, detail.direction);
  const format = (v: number) => formatObjective(v, percent);
  return {
    animation: false,
    grid: { left: 56, right: 16, top: 32, bottom: 36 },
    legend: { top: 0, right: 8, textStyle: { color: '#475467', fontSize: 11 } },
    tooltip: { trigger: 'axis', valueFormatter: format },
    xAxis: {
      type: 'value',
      name: labels.trial,
      nameLocation: 'middle',
      nameGap: 24,
      minInterval: 1,
      min: 1,
      max: Math.max(detail.trials, 2),
      axisLabel: AXIS_LABEL,
    },
    yAxis: {
      type: 'value',
      scale: true,
      // A share never passes 100%: without this, ECharts pads a flat line of 1.0 up to 160%.
      max: percent ? (extent: { max: number }) => Math.min(1, niceCeil(extent.max)) : undefined,
      name: labels.value,
      axisLabel: { ...AXIS_LABEL, formatter: format },
    },
    series: [
      {
        name: labels.trials,
        type: 'scatter',
        symbolSize: 7,
        itemStyle: { color: '#a5b4fc' },
        data: complete.map((trial) => [shownNumber(trial.number), trial.value]),
      },
      {
        name: labels.best,
        type: 'line',
        step: 'end',
        symbol: 'circle',
        symbolSize: 5,
        itemStyle: { color: '#4f46e5' },
        lineStyle: { width: 2 },
        data: best,
      },
    ],
  };
}

/** Importance bars, the most important on top, each named by `name` (from its `node.param` key). */
export function importanceOption(importance: Record<string, number>, name: (key: string) => string = (key) => key) {
  const rows = Object.entries(importance).sort((a, b) => a[1] - b[1]);
  return {
    animation: false,
    grid: { left: 8, right: 48, top: 8, bottom: 8, containLabel: true },
    tooltip: {
      trigger: 'axis',
      axisPointer: { type: 'shadow' },
      valueFormatter: (v: number) => `${(v * 100).toFixed(1)}%`,
    },
    xAxis: { type: 'value', max: 1, show: false },
    yAxis: { type: 'category', data: rows.map(([key]) => name(key)), axisLabel: { ...AXIS_LABEL, color: '#344054' } },
    series: [
      {
        type: 'bar',
        data: rows.map(([, value]) => value),
        barMaxWidth: 18,
        itemStyle: { color: '#4f46e5', borderRadius: [0, 4, 4, 0] },
        label: {
          show: true,
          position: 'right',
          color: '#475467',
          fontSize: 11,
          formatter: ({ value }: { value: number }) => `${(value * 100).toFixed(0)}%`,
        },
      },
    ],
  };
}

/** Seconds a trial trained (up to now while it runs); null before it started. */
export function trialSeconds(trial: Trial, now: number): number | null {
  if (!trial.started_at) return null;
  const start = parseServerTime(trial.started_at);
  const end = trial.finished_at ? parseServerTime(trial.finished_at) : now;
  return Number.isFinite(start) && Number.isFinite(end) ? Math.max(0, (end - start) / 1000) : null;
}

/** Trials are counted from 1 where people read them, as their tasks are named ("… #1"); the API
 * numbers them from 0, as Optuna does. */
export function shownNumber(number: number): number {
  return number + 1;
}
