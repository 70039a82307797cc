import { describe, expect, it } from 'vitest';
import type { SweepDetail, Trial } from './api';
import {
  bestSoFar,
  formatObjective,
  formatParam,
  importanceOption,
  lastValue,
  parallelOption,
  searchAxes,
} from './charts';
import { labelWidth } from '../monitor/chartOptions';

const trial = (number: number, state: Trial['state'], value: number | null, over: Partial<Trial> = {}): Trial => ({
  number,
  task_id: `t${number}`,
  task_status: 'SUCCEEDED',
  params: { 'train.lr': 0.001 * (number + 1), 'train.optimizer': number % 2 ? 'sgd' : 'adam' },
  state,
  value,
  intermediate: value === null ? {} : { '1': value / 2, '2': value },
  created_at: '2026-01-01T00:00:00',
  started_at: null,
  finished_at: null,
  ...over,
});

const detail = (trials: Trial[]): SweepDetail => ({
  id: 's',
  name: 'sweep',
  graph_id: null,
  status: 'RUNNING',
  trials: 8,
  parallel: 2,
  objective: 'val_accuracy',
  direction: 'maximize',
  sampler: 'tpe',
  pruner: 'median',
  seed: 0,
  error: null,
  best_model_id: null,
  created_at: '2026-01-01T00:00:00',
  finished_at: null,
  counts: {},
  best_value: null,
  base_graph: { version: 1, name: 'g', nodes: [{ id: 'train', type: 'train.Classifier' }], edges: [] },
  search: {
    train: {
      lr: { type: 'float', low: 1e-4, high: 1e-2, log: true },
      optimizer: { type: 'choice', values: ['adam', 'sgd'] },
    },
  },
  trial_list: trials,
  best_trial: null,
  importance: {},
  importance_trials: 0,
  importance_min_trials: 10,
});

describe('searchAxes', () => {
  it('makes a log axis of a log range and a category axis of choices, in the section order', () => {
    expect(searchAxes(detail([]).search)).toEqual([
      { key: 'train.lr', kind: 'number', log: true },
      { key: 'train.optimizer', kind: 'category', log: false, values: ['adam', 'sgd'] },
    ]);
  });
});

describe('bestSoFar', () => {
  it('follows the best complete trial, skipping pruned and running ones', () => {
    const trials = [
      trial(2, 'COMPLETE', 0.8),
      trial(0, 'COMPLETE', 0.7),
      trial(1, 'PRUNED', 0.95),
      trial(3, 'COMPLETE', 0.75),
      trial(4, 'RUNNING', null),
    ];
    // Against the trial as people count it, from 1 (the tasks are named "… #1").
    expect(bestSoFar(trials, 'maximize')).toEqual([
      [1, 0.7],
      [3, 0.8],
      [4, 0.8],
    ]);
    expect(bestSoFar(trials, 'minimize')).toEqual([
      [1, 0.7],
      [3, 0.7],
      [4, 0.7],
    ]);
  });
});

describe('parallelOption', () => {
  it('draws one line per trial with a value, its params then its objective, grouped by state', () => {
    const option = parallelOption(
      detail([trial(0, 'COMPLETE', 0.9), trial(1, 'PRUNED', 0.5), trial(2, 'RUNNING', null)]),
      {
        objective: 'val_accuracy',
        state: (state) => state.toLowerCase(),
      },
    );
    expect(option.parallelAxis.map((axis) => [axis.name, axis.type])).toEqual([
      ['train.lr', 'log'],
      ['train.optimizer', 'category'],
      ['val_accuracy', 'value'],
    ]);
    expect(option.series.map((series) => series.name)).toEqual(['complete', 'pruned']);
    expect(option.series[0]!.data).toEqual([{ name: '#1', value: [0.001, 'adam', 0.9] }]);
  });

  it('leaves room beside the outer axes for their names, centred over them', () => {
    // The review's sweep showed "essor-1 · Learning rate": the name was wider than the margin.
    const name = 'regressor-1 · Learning rate';
    const objective = 'Validation mean absolute error';
    const option = parallelOption(detail([trial(0, 'COMPLETE', 0.9)]), {
      objective,
      state: (state) => state,
      param: (key) => (key === 'train.lr' ? name : key),
    });
    expect(option.parallel.left).toBeGreaterThanOrEqual(labelWidth(name, 11) / 2);
    expect(option.parallel.right).toBeGreaterThanOrEqual(labelWidth(objective, 11) / 2);
    // Short names keep the usual margins.
    const short = parallelOption(detail([trial(0, 'COMPLETE', 0.9)]), { objective: 'MAE', state: (s) => s });
    expect([short.parallel.left, short.parallel.right]).toEqual([48, 96]);
  });
});

describe('formatting', () => {
  it('shows params and objectives compactly', () => {
    expect(formatParam(0.000123456)).toBe('1.23e-4');
    expect(formatParam(0.35)).toBe('0.35');
    expect(formatParam(64)).toBe('64');
    expect(formatParam('adam')).toBe('adam');
    expect(formatObjective(0.98765, true)).toBe('98.77%');
    expect(formatObjective(0.1234567, false)).toBe('0.1235');
    expect(formatObjective(null, true)).toBe('—');
    expect(lastValue(trial(0, 'COMPLETE', 0.9))).toBe(0.9);
  });
});

describe('param names on the charts', () => {
  const name = (key: string) => (key === 'train.lr' ? 'train · Learning rate' : key);

  it('names the parallel axes by the labeller, the objective axis by its label', () => {
    const option = parallelOption(detail([trial(0, 'COMPLETE', 0.7)]), {
      objective: 'val_accuracy',
      state: (state) => state,
      param: name,
    });
    expect(option.parallelAxis.map((axis) => axis.name)).toEqual([
      'train · Learning rate',
      'train.optimizer',
      'val_accuracy',
    ]);
  });

  it('keeps the keys without a labeller', () => {
    const option = parallelOption(detail([]), { objective: 'val_accuracy', state: (state) => state });
    expect(option.parallelAxis.map((axis) => axis.name).slice(0, 2)).toEqual(['train.lr', 'train.optimizer']);
  });

  it('names the importance bars the same way, the most important on top', () => {
    const option = importanceOption({ 'train.lr': 0.8, 'train.optimizer': 0.2 }, name);
    expect(option.yAxis.data).toEqual(['train.optimizer', 'train · Learning rate']);
    expect(importanceOption({ 'train.lr': 1 }).yAxis.data).toEqual(['train.lr']);
  });
});
