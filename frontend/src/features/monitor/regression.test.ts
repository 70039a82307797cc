// The regression side of the monitor: which kind a run is, which metrics it charts, and the
// scatter and residual charts of its report.
import { describe, expect, it } from 'vitest';
import { asKind, chartedMetrics, headlineMetric, kindFromMetrics, kindMetrics, resolveKind } from '../catalog/taskKind';
import { EMPTY_CATALOG } from '../catalog/catalogIndex';
import { CATALOG } from '../../test/fixtures';
import { binFormatter, histogramBins, residualOption, scatterOption, scatterPoints } from './chartOptions';
import { INITIAL_STATE, bestEpochValue, metricCurves, metricKeys, reduceEvents, type TaskEvent } from './series';

const labels = { actual: 'Actual', predicted: 'Predicted', identity: 'y = x', empty: 'none' };

const metric = (id: number, scope: string, epoch: number, step: number, values: Record<string, number>): TaskEvent => ({
  id,
  kind: 'metric',
  data: { scope, epoch, step, values },
});

// Two epochs of a regression run: step windows and epoch figures as the trainer reports them.
const regressionRun = reduceEvents(INITIAL_STATE, [
  { id: 1, kind: 'start', data: { epochs: 2, steps_per_epoch: 4 } },
  metric(2, 'step', 1, 2, { loss: 9, mae: 2.5, rmse: 3, r2: -0.2 }),
  metric(3, 'epoch', 1, 4, {
    loss: 8,
    mae: 2.2,
    rmse: 2.8,
    r2: 0.1,
    val_loss: 7,
    val_mae: 2,
    val_rmse: 2.6,
    val_r2: 0.3,
  }),
  metric(4, 'step', 2, 6, { loss: 4, mae: 1.5, rmse: 2, r2: 0.4 }),
  metric(5, 'epoch', 2, 8, {
    loss: 4,
    mae: 1.4,
    rmse: 1.9,
    r2: 0.5,
    val_loss: 5,
    val_mae: 1.8,
    val_rmse: 2.2,
    val_r2: 0.45,
  }),
  metric(6, 'test', 2, 8, { test_loss: 5.5, test_mae: 1.9, test_rmse: 2.3, test_r2: 0.41 }),
]);

describe('task kinds', () => {
  it('knows a kind by name only when it is one', () => {
    expect(asKind('regression', CATALOG)).toBe('regression');
    expect(asKind('classification', CATALOG)).toBe('classification');
    expect(asKind('segmentation', CATALOG)).toBeNull();
    expect(asKind(undefined, CATALOG)).toBeNull();
    expect(asKind('regression', EMPTY_CATALOG)).toBeNull();
  });

  it("tells a run's kind from the metrics it reports", () => {
    expect(kindFromMetrics(metricKeys(regressionRun), CATALOG)).toBe('regression');
    expect(kindFromMetrics(['loss', 'accuracy', 'val_accuracy'], CATALOG)).toBe('classification');
    expect(kindFromMetrics(['loss', 'lr', 'samples_per_s'], CATALOG)).toBeNull();
    expect(kindFromMetrics([], CATALOG)).toBeNull();
  });

  it("takes the first kind a source knows, else the catalog's first (older records name none)", () => {
    expect(resolveKind(CATALOG, null, 'regression')).toBe('regression');
    expect(resolveKind(CATALOG, 'classification', 'regression')).toBe('classification');
    expect(resolveKind(CATALOG, undefined, null)).toBe('classification');
    expect(resolveKind(EMPTY_CATALOG, undefined, null)).toBeNull();
  });

  it('charts MAE, RMSE and R² for regression instead of accuracy', () => {
    expect(chartedMetrics(CATALOG, 'regression').map((m) => m.key)).toEqual(['mae', 'rmse', 'r2']);
    expect(chartedMetrics(CATALOG, 'regression').some((m) => m.percent)).toBe(false);
    expect(chartedMetrics(CATALOG, 'classification').map((m) => m.key)).toEqual(['accuracy']);
    expect(kindMetrics(CATALOG, 'classification').map((m) => m.key)).toEqual(['accuracy', 'top5_accuracy']);
    expect(headlineMetric(CATALOG, 'regression')).toMatchObject({ key: 'r2', label: 'R²', higherIsBetter: true });
    expect(headlineMetric(CATALOG, 'classification')).toMatchObject({ key: 'accuracy', percent: true });
    expect(headlineMetric(EMPTY_CATALOG, 'regression').key).toBe('loss');
  });
});

describe('regression curves', () => {
  it('gives each metric its train steps, train epochs and validation epochs', () => {
    const mae = metricCurves(regressionRun, 'mae');
    expect(mae.steps).toEqual([
      [0.5, 2.5],
      [1.5, 1.5],
    ]);
    expect(mae.train).toEqual([
      [1, 2.2],
      [2, 1.4],
    ]);
    expect(mae.val).toEqual([
      [1, 2],
      [2, 1.8],
    ]);
    expect(metricCurves(regressionRun, 'accuracy')).toEqual({ steps: [], train: [], val: [] });
  });

  it('finds the best validation value in the direction the metric improves', () => {
    expect(bestEpochValue(regressionRun, 'val_r2', true)).toBe(0.45);
    expect(bestEpochValue(regressionRun, 'val_mae', false)).toBe(1.8);
    expect(bestEpochValue(regressionRun, 'val_accuracy', true)).toBeNull();
  });
});

describe('predicted vs. actual', () => {
  const scatter = { actual: [1, 2, 3, 10], predicted: [1.5, 2, 2.5, 8], total: 4 };

  it('plots the pairs with a y = x line across the shared range', () => {
    const option = scatterOption(scatter, labels);
    const [points, identity] = option.series;
    expect(points!.type).toBe('scatter');
    expect(points!.data).toEqual([
      [1, 1.5],
      [2, 2],
      [3, 2.5],
      [10, 8],
    ]);
    // The diagonal runs from corner to corner of a square plot: both axes span the same range,
    // which holds every point with some room (lowest 1, highest 10).
    expect(identity!.type).toBe('line');
    const [[x0, y0], [x1, y1]] = identity!.data as [[number, number], [number, number]];
    expect(x0).toBe(y0);
    expect(x1).toBe(y1);
    expect(option.xAxis.min).toBe(option.yAxis.min);
    expect(option.xAxis.max).toBe(option.yAxis.max);
    expect(x0).toBeLessThan(1);
    expect(x1).toBeGreaterThan(10);
    expect(option.xAxis.name).toBe('Actual');
    expect(option.yAxis.name).toBe('Predicted');
    expect(option.graphic).toBeUndefined();
  });

  it('leaves out pairs that are not finite and says when nothing is left', () => {
    expect(scatterPoints({ actual: [1, NaN, 3], predicted: [1, 2, Infinity], total: 3 }).points).toEqual([[1, 1]]);
    const empty = scatterOption({ actual: [], predicted: [], total: 0 }, labels);
    expect(empty.series[0]!.data).toEqual([]);
    expect(empty.graphic).toMatchObject({ style: { text: 'none' } });
  });

  it('rounds the shared range out to the tick step', () => {
    // 1 .. 10 padded a little, then out to multiples of the step ECharts picks (2): 0 .. 12.
    expect(scatterPoints(scatter)).toMatchObject({ lo: 0, hi: 12, step: 2 });
    expect(scatterOption(scatter, labels).xAxis.interval).toBe(2);
  });

  it('gives a single value a range to sit in', () => {
    const { lo, hi } = scatterPoints({ actual: [5], predicted: [5], total: 1 });
    expect(lo).toBeLessThan(5);
    expect(hi).toBeGreaterThan(5);
  });
});

describe('residual histogram', () => {
  const residuals = { edges: [-2, -1, 0, 1, 2], counts: [1, 5, 7, 2], mean: 0.1, std: 0.9 };

  it('draws one bar per bin, the bin holding zero error highlighted', () => {
    expect(histogramBins(residuals)).toEqual([
      { from: -2, to: -1, count: 1 },
      { from: -1, to: 0, count: 5 },
      { from: 0, to: 1, count: 7 },
      { from: 1, to: 2, count: 2 },
    ]);
    const option = residualOption(residuals, { residual: 'residual', count: 'samples', empty: 'none' });
    const bars = option.series[0]!.data;
    expect(bars.map((bar) => bar.value)).toEqual([1, 5, 7, 2]);
    // Bins whose range touches 0 are the ones around a perfect prediction.
    expect(bars.map((bar) => bar.itemStyle.color === '#4f46e5')).toEqual([false, true, true, false]);
    expect(option.xAxis.data).toEqual(['-1.5', '-0.5', '0.5', '1.5']);
  });

  it('labels bins one decimal finer than their width', () => {
    expect(binFormatter([{ from: -0.93, to: -0.71 }])(-0.82)).toBe('-0.82');
    expect(binFormatter([{ from: 10, to: 35 }])(22.5)).toBe('23');
    expect(binFormatter([{ from: -3.1, to: 0.2 }])(-1.45)).toBe('-1.4');
  });

  it('refuses edges that do not frame the counts', () => {
    expect(histogramBins({ ...residuals, edges: [0, 1] })).toEqual([]);
    const option = residualOption(
      { edges: [], counts: [], mean: 0, std: 0 },
      { residual: 'r', count: 'n', empty: 'none' },
    );
    expect(option.graphic).toMatchObject({ style: { text: 'none' } });
  });
});
