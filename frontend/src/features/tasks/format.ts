// Pure helpers for showing tasks: status tones, durations, the best metric, timestamps, sorting.
import type { components, operations } from '../../api/schema';

export type TaskStatus = components['schemas']['TaskStatus'];
export type TaskPublic = components['schemas']['TaskPublic'];
/** The order the server pages the task list in (GET /api/tasks?sort=). */
export type TaskListSort = NonNullable<NonNullable<operations['listTasks']['parameters']['query']>['sort']>;

export const TASK_STATUSES: readonly TaskStatus[] = ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'STOPPED'];
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'STOPPED']);

export type Tone = 'neutral' | 'busy' | 'good' | 'bad' | 'warn';

const TONES: Record<TaskStatus, Tone> = {
  QUEUED: 'neutral',
  RUNNING: 'busy',
  SUCCEEDED: 'good',
  FAILED: 'bad',
  STOPPED: 'warn',
};

export function statusTone(status: string): Tone {
  return TONES[status as TaskStatus] ?? 'neutral';
}

export function isFinal(status: string | null | undefined): boolean {
  return status != null && FINAL_STATUSES.has(status);
}

export function isActive(status: string | null | undefined): boolean {
  return status === 'QUEUED' || status === 'RUNNING';
}

/** What a task can do next, from its status (the server refuses the others with 409). */
/**
 * Failures of the graph, its parameters or its data: resuming from the checkpoint meets the same
 * error again, so such a task offers "Open in editor" instead of Resume. Codes not listed (the
 * infrastructure, a lost worker, memory, unknown new codes) keep Resume.
 */
const NOT_RETRYABLE: ReadonlySet<string> = new Set([
  'graph_invalid',
  'layer_failed',
  'expression_failed',
  'dataset_invalid',
  'dataset_path_forbidden',
  'checkpoint_invalid',
  'cuda_unavailable',
  'loss_not_finite',
  'non_finite',
  'folder_deleted',
  'param_invalid',
  'schema_invalid',
  'graph_too_large',
  'value_too_long',
]);

/** Which buttons a task offers; `edit` first and prominent when only a change of the graph can help. */
export function taskActions(
  status: string,
  errorCode: string | null = null,
): { stop: boolean; retry: boolean; editFirst: boolean } {
  const fixInEditor = status === 'FAILED' && errorCode !== null && NOT_RETRYABLE.has(errorCode);
  return {
    stop: isActive(status),
    retry: status === 'STOPPED' || (status === 'FAILED' && !fixInEditor),
    editFirst: fixInEditor,
  };
}

/** "350 ms", "4.2 s", "42 s", "3 min 05 s", "2 h 04 min"; an em dash when unknown. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds == null || !Number.isFinite(seconds) || seconds < 0) return '—';
  // Below a second, tenths of a second would read "0.0 s" for a quick task.
  const ms = Math.round(seconds * 1000);
  if (ms < 1000) return `${ms} ms`;
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole} s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes} min ${String(whole % 60).padStart(2, '0')} s`;
  const hours = Math.floor(minutes / 60);
  return `${hours} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** A share 0..1 as a percentage with `digits` decimals; an em dash when missing. */
export function formatPercent(value: number | null | undefined, digits = 1): string {
  if (value == null || !Number.isFinite(value)) return '—';
  return `${(value * 100).toFixed(digits)}%`;
}

/** A number with about four significant digits, small ones in exponent form. */
export function formatNumber(value: number | null | undefined): string {
  if (value == null || !Number.isFinite(value)) return '—';
  const size = Math.abs(value);
  if (size !== 0 && (size < 1e-3 || size >= 1e6)) return value.toExponential(2);
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(4)));
}

/** Binary units (KiB, MiB, GiB): the server and its settings count quotas and caps in powers of 1024. */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes == null || !Number.isFinite(bytes)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/**
 * The server writes some timestamps without a zone (SQLite drops it); they are UTC.
 * Returns epoch milliseconds, or NaN for an unreadable value.
 */
export function parseServerTime(value: string | null | undefined): number {
  if (!value) return Number.NaN;
  const zoned = /(Z|[+-]\d\d:?\d\d)$/.test(value) ? value : `${value}Z`;
  return Date.parse(zoned);
}

/** A server time as every page writes one: '26 Nov 2026, 20:53', '2026年11月26日 20:53'; '—' if none. */
export function formatDate(value: string | null | undefined, language: string): string {
  const ms = parseServerTime(value);
  if (Number.isNaN(ms)) return '—';
  return new Date(ms).toLocaleString(language === 'zh' ? 'zh-CN' : 'en-GB', {
    dateStyle: 'medium',
    timeStyle: 'short',
  });
}

/** Seconds a task has run: the server's figure, or from started_at to `now` while it runs. */
export function elapsedSeconds(
  task: Pick<TaskPublic, 'elapsed_s' | 'started_at' | 'finished_at'>,
  now: number,
): number | null {
  if (!task.started_at) return null;
  if (task.finished_at) return task.elapsed_s ?? null;
  const started = parseServerTime(task.started_at);
  return Number.isNaN(started) ? (task.elapsed_s ?? null) : Math.max(0, (now - started) / 1000);
}

/** The headline score of a task: the best validation accuracy, else the best training accuracy. */
/** A score of a run: accuracy (a share, shown as a percentage) or R² (a plain number). */
export interface Score {
  key: string;
  value: number;
  percent: boolean;
}

function firstScore(best: Record<string, number> | null | undefined, keys: readonly string[]): Score | null {
  if (!best) return null;
  for (const key of keys) {
    const value = best[key];
    // Every score but R² is a share; R² (regression) can be any number up to 1.
    if (typeof value === 'number' && Number.isFinite(value)) return { key, value, percent: !key.endsWith('r2') };
  }
  return null;
}

/** The headline score of a run's best metrics: accuracy for classification, R² for regression. */
export function bestMetric(best: Record<string, number> | null | undefined): Score | null {
  return firstScore(best, ['val_accuracy', 'accuracy', 'val_r2', 'r2']);
}

export function testAccuracy(best: Record<string, number> | null | undefined): number | null {
  return firstScore(best, ['test_accuracy'])?.value ?? null;
}

/** The test score of a run: its test accuracy, or its test R² for regression. */
export function testScore(best: Record<string, number> | null | undefined): Score | null {
  return firstScore(best, ['test_accuracy', 'test_r2']);
}

/** "93.3%" for a share, "R² 0.452" for R²; "—" for none. */
export function formatScore(score: Score | null): string {
  if (!score) return '—';
  return score.percent ? formatPercent(score.value) : `R² ${formatNumber(score.value)}`;
}

export type SortKey = 'created' | 'name' | 'status' | 'duration' | 'best' | 'progress';
export type SortDirection = 'asc' | 'desc';

export const TASK_LIST_SORTS: readonly TaskListSort[] = ['newest', 'oldest', 'status', 'name'];

/**
 * The column sort that shows a page in the order the server gave it: changing the list order
 * resets the table's headers to it, so the rows do not appear reshuffled by an older click.
 */
export function columnSortFor(sort: TaskListSort): { key: SortKey; direction: SortDirection } {
  switch (sort) {
    case 'newest':
      return { key: 'created', direction: 'desc' };
    case 'oldest':
      return { key: 'created', direction: 'asc' };
    case 'status':
      return { key: 'status', direction: 'asc' };
    case 'name':
      return { key: 'name', direction: 'asc' };
  }
}

function sortValue(task: TaskPublic, key: SortKey, now: number): number | string {
  switch (key) {
    case 'created':
      return parseServerTime(task.created_at);
    case 'name':
      return task.name.toLowerCase();
    case 'status':
      return TASK_STATUSES.indexOf(task.status);
    case 'duration':
      return elapsedSeconds(task, now) ?? -1;
    case 'best':
      return bestMetric(task.best_metrics)?.value ?? -1;
    case 'progress':
      return task.progress;
  }
}

/** A sorted copy; ties keep the newest first. */
export function sortTasks(
  tasks: readonly TaskPublic[],
  key: SortKey,
  direction: SortDirection,
  now: number,
): TaskPublic[] {
  const sign = direction === 'asc' ? 1 : -1;
  return [...tasks].sort((a, b) => {
    const x = sortValue(a, key, now);
    const y = sortValue(b, key, now);
    if (x < y) return -sign;
    if (x > y) return sign;
    return parseServerTime(b.created_at) - parseServerTime(a.created_at);
  });
}
