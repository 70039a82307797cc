// Small line plots of sequences: the dataset preview's sample series per class and the prediction
// page's input series. Pure (plain ECharts options), so they can be checked without a canvas.
import { PALETTE } from '../monitor/echarts';

/** One sample series as the dataset preview sends it (server: inputs/sequence_upload.py). */
export interface PreviewSample {
  sample: number;
  length: number;
  /** A numeric target's value; null for a class. */
  target: number | null;
  /** The steps plotted when the series was sampled down; null when every step is there. */
  steps: number[] | null;
  /** Per feature, the values at those steps. */
  values: number[][];
}

export interface PreviewGroup {
  /** The class; null for a range of numeric targets. */
  name: string | null;
  index: number | null;
  samples: PreviewSample[];
}

export interface SequencePreviewData {
  groups: PreviewGroup[];
  features: number;
  features_shown: number;
  max_points: number;
  feature_stats: { index: number; mean: number; std: number; min: number; max: number }[];
}

const isNumberList = (value: unknown): value is number[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'number');

/** The preview payload, or null when `value` is not one (an older server, another input type). */
export function asSequencePreview(value: unknown): SequencePreviewData | null {
  if (typeof value !== 'object' || value === null) return null;
  const preview = value as Partial<SequencePreviewData>;
  if (!Array.isArray(preview.groups) || typeof preview.features !== 'number') return null;
  const samplesOk = preview.groups.every(
    (group) =>
      Array.isArray(group.samples) &&
      group.samples.every((s) => Array.isArray(s.values) && s.values.every(isNumberList)),
  );
  return samplesOk
    ? ({ feature_stats: [], features_shown: preview.features, max_points: 0, ...preview } as SequencePreviewData)
    : null;
}

/** Points a plotted feature keeps: a longer series is sampled at evenly spaced steps (as the server does). */
export const MAX_POINTS = 200;

/** (T, F) values as per-feature series of at most `maxPoints` [step, value] points each. */
export function downsample(series: number[][], maxPoints = MAX_POINTS, maxFeatures = 4): [number, number][][] {
  const length = series.length;
  const features = Math.min(series[0]?.length ?? 0, maxFeatures);
  const count = Math.min(length, maxPoints);
  const steps =
    count <= 1
      ? [0].slice(0, length)
      : [...new Set(Array.from({ length: count }, (_, i) => Math.round((i * (length - 1)) / (count - 1))))];
  return Array.from({ length: features }, (_, f) => steps.map((step) => [step, series[step]![f]!] as [number, number]));
}

/** A preview sample's features as [step, value] points. */
export function samplePoints(sample: PreviewSample): [number, number][][] {
  return sample.values.map((values) => values.map((value, i) => [sample.steps?.[i] ?? i, value] as [number, number]));
}

export interface PlotLabels {
  /** A feature's legend name: "feature 1". */
  feature: (index: number) => string;
  step: string;
}

/**
 * A small line plot of several series of one group: each feature its colour, each sample a line
 * (later samples lighter), the legend naming the features when there are several.
 */
export function linesOption(series: [number, number][][][], labels: PlotLabels) {
  const features = Math.max(0, ...series.map((sample) => sample.length));
  const lines = series.flatMap((sample, s) =>
    sample.map((points, f) => ({
      type: 'line',
      name: labels.feature(f),
      data: points,
      showSymbol: false,
      smooth: false,
      lineStyle: { width: 1.2, opacity: 1 - Math.min(s, 3) * 0.22 },
      itemStyle: { color: PALETTE[f % PALETTE.length] },
      emphasis: { disabled: true },
    })),
  );
  return {
    animation: false,
    grid: { left: 40, right: 8, top: features > 1 ? 24 : 8, bottom: 22 },
    legend: features > 1 ? { top: 0, itemHeight: 8, textStyle: { fontSize: 10, color: '#475467' } } : undefined,
    tooltip: { trigger: 'axis' },
    xAxis: {
      type: 'value',
      name: labels.step,
      nameGap: 4,
      nameTextStyle: { fontSize: 10, color: '#98a2b3' },
      axisLabel: { color: '#667085', fontSize: 10 },
      splitLine: { show: false },
      min: 'dataMin',
      max: 'dataMax',
    },
    yAxis: {
      type: 'value',
      scale: true,
      axisLabel: { color: '#667085', fontSize: 10 },
      splitLine: { lineStyle: { color: '#eef0f4' } },
    },
    series: lines,
  };
}
