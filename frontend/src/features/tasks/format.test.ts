import { describe, expect, it } from 'vitest';
import {
  bestMetric,
  formatScore,
  testScore,
  columnSortFor,
  elapsedSeconds,
  formatBytes,
  formatDuration,
  formatNumber,
  formatPercent,
  isFinal,
  parseServerTime,
  sortTasks,
  statusTone,
  TASK_LIST_SORTS,
  taskActions,
  testAccuracy,
  type TaskPublic,
} from './format';

const task = (over: Partial<TaskPublic>): TaskPublic => ({
  id: 'a',
  name: 'A',
  graph_id: null,
  status: 'SUCCEEDED',
  priority: 0,
  resources: {},
  attempts: 1,
  max_attempts: 3,
  resume: false,
  stop_requested: false,
  error: null,
  progress: 1,
  epoch: 2,
  best_metrics: {},
  created_at: '2026-01-01T10:00:00Z',
  started_at: '2026-01-01T10:00:05Z',
  finished_at: '2026-01-01T10:01:05Z',
  heartbeat_at: null,
  elapsed_s: 60,
  continued: false,
  retries: 0,
  max_retries: 2,
  ...over,
});

describe('status formatting', () => {
  it('gives each status a tone and its actions', () => {
    expect(['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'STOPPED', '??'].map(statusTone)).toEqual([
      'neutral',
      'busy',
      'good',
      'bad',
      'warn',
      'neutral',
    ]);
    expect(taskActions('RUNNING')).toEqual({ stop: true, retry: false, editFirst: false });
    expect(taskActions('FAILED')).toEqual({ stop: false, retry: true, editFirst: false });
    expect(taskActions('SUCCEEDED')).toEqual({ stop: false, retry: false, editFirst: false });
    expect(isFinal('STOPPED')).toBe(true);
    expect(isFinal('QUEUED')).toBe(false);
  });

  it('offers Resume only for failures a retry can fix, and the editor for graph and data errors', () => {
    for (const code of [
      'non_finite',
      'graph_invalid',
      'expression_failed',
      'dataset_invalid',
      'layer_failed',
      'loss_not_finite',
    ]) {
      expect(taskActions('FAILED', code)).toEqual({ stop: false, retry: false, editFirst: true });
    }
    for (const code of ['infrastructure_failed', 'worker_lost', 'out_of_memory', 'a_new_code']) {
      expect(taskActions('FAILED', code)).toEqual({ stop: false, retry: true, editFirst: false });
    }
    expect(taskActions('STOPPED', null).retry).toBe(true);
  });

  it('formats durations, shares, numbers and sizes', () => {
    expect(formatDuration(null)).toBe('—');
    expect(formatDuration(3.24)).toBe('3.2 s');
    expect(formatDuration(0.35)).toBe('350 ms');
    expect(formatDuration(0.0004)).toBe('0 ms');
    expect(formatDuration(0.9996)).toBe('1.0 s');
    expect(formatDuration(42)).toBe('42 s');
    expect(formatDuration(185)).toBe('3 min 05 s');
    expect(formatDuration(7440)).toBe('2 h 04 min');
    expect(formatPercent(0.8766)).toBe('87.7%');
    expect(formatPercent(undefined)).toBe('—');
    expect(formatNumber(0.123456)).toBe('0.1235');
    expect(formatNumber(0.00001234)).toBe('1.23e-5');
    expect(formatNumber(12)).toBe('12');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(50 * 1024 * 1024)).toBe('50 MiB');
  });

  it('writes sizes in binary units, as the server and README count quotas', () => {
    expect(formatBytes(20 * 1024 ** 3)).toBe('20 GiB');
    expect(formatBytes(3 * 1024 ** 4)).toBe('3.0 TiB');
  });

  it('reads server times with and without a zone as UTC', () => {
    expect(parseServerTime('2026-01-01T00:00:00')).toBe(Date.UTC(2026, 0, 1));
    expect(parseServerTime('2026-01-01T00:00:00Z')).toBe(Date.UTC(2026, 0, 1));
    expect(parseServerTime('2026-01-01T01:00:00+01:00')).toBe(Date.UTC(2026, 0, 1));
    expect(parseServerTime(null)).toBeNaN();
  });

  it('counts a running task up to now and a finished one as the server says', () => {
    const now = Date.UTC(2026, 0, 1, 10, 0, 35);
    expect(elapsedSeconds(task({ finished_at: null, status: 'RUNNING' }), now)).toBe(30);
    expect(elapsedSeconds(task({}), now)).toBe(60);
    expect(elapsedSeconds(task({ started_at: null }), now)).toBeNull();
  });

  it('picks the best validation accuracy, else the training one', () => {
    expect(bestMetric({ accuracy: 0.9, val_accuracy: 0.8 })).toEqual({
      key: 'val_accuracy',
      value: 0.8,
      percent: true,
    });
    expect(bestMetric({ accuracy: 0.9 })).toEqual({ key: 'accuracy', value: 0.9, percent: true });
    // Regression: R² is the headline score, a plain number (it can be negative).
    expect(bestMetric({ val_r2: -0.25, val_mae: 3 })).toEqual({ key: 'val_r2', value: -0.25, percent: false });
    expect(formatScore(bestMetric({ val_r2: 0.4519 }))).toBe('R² 0.4519');
    expect(formatScore(testScore({ test_accuracy: 0.9333 }))).toBe('93.3%');
    expect(formatScore(testScore({ test_r2: 0.5 }))).toBe('R² 0.5');
    expect(formatScore(testScore({ test_mae: 2 }))).toBe('—');
    expect(bestMetric({ loss: 1 })).toBeNull();
    expect(testAccuracy({ test_accuracy: 0.7 })).toBe(0.7);
  });
});

describe('sortTasks', () => {
  const tasks = [
    task({ id: '1', name: 'beta', created_at: '2026-01-01T10:00:00Z', best_metrics: { val_accuracy: 0.5 } }),
    task({ id: '2', name: 'Alpha', created_at: '2026-01-02T10:00:00Z', best_metrics: { val_accuracy: 0.9 } }),
    task({ id: '3', name: 'gamma', created_at: '2026-01-03T10:00:00Z', status: 'FAILED' }),
  ];
  const ids = (list: TaskPublic[]) => list.map((t) => t.id);

  it('sorts by each column in both directions', () => {
    expect(ids(sortTasks(tasks, 'created', 'desc', 0))).toEqual(['3', '2', '1']);
    expect(ids(sortTasks(tasks, 'name', 'asc', 0))).toEqual(['2', '1', '3']);
    expect(ids(sortTasks(tasks, 'best', 'desc', 0))).toEqual(['2', '1', '3']);
    expect(ids(sortTasks(tasks, 'status', 'asc', 0))).toEqual(['2', '1', '3']);
  });

  it('does not change its input', () => {
    sortTasks(tasks, 'name', 'asc', 0);
    expect(ids(tasks)).toEqual(['1', '2', '3']);
  });
});

describe('columnSortFor', () => {
  // A page as the server might send it, in no particular order; ties on status and name.
  const page = [
    task({ id: 'a', name: 'beta', status: 'SUCCEEDED', created_at: '2026-01-01T10:00:00Z' }),
    task({ id: 'b', name: 'Alpha', status: 'QUEUED', created_at: '2026-01-04T10:00:00Z' }),
    task({ id: 'c', name: 'alpha', status: 'SUCCEEDED', created_at: '2026-01-03T10:00:00Z' }),
    task({ id: 'd', name: 'gamma', status: 'RUNNING', created_at: '2026-01-02T10:00:00Z' }),
    task({ id: 'e', name: 'Delta', status: 'STOPPED', created_at: '2026-01-05T10:00:00Z' }),
  ];
  const ids = (list: TaskPublic[]) => list.map((t) => t.id);
  const shown = (order: (typeof TASK_LIST_SORTS)[number]) => {
    const { key, direction } = columnSortFor(order);
    return ids(sortTasks(page, key, direction, 0));
  };

  it('shows a page in the order the server pages by', () => {
    expect(shown('newest')).toEqual(['e', 'b', 'c', 'd', 'a']);
    expect(shown('oldest')).toEqual(['a', 'd', 'c', 'b', 'e']);
    // Lifecycle order, not the alphabet; newest first within one status.
    expect(shown('status')).toEqual(['b', 'd', 'c', 'a', 'e']);
    // Ignoring case; newest first between equal names.
    expect(shown('name')).toEqual(['b', 'c', 'a', 'e', 'd']);
  });

  it('offers every order the server takes, newest first by default', () => {
    expect(TASK_LIST_SORTS).toEqual(['newest', 'oldest', 'status', 'name']);
    expect(columnSortFor(TASK_LIST_SORTS[0]!)).toEqual({ key: 'created', direction: 'desc' });
  });
});
