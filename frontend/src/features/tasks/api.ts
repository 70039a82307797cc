// The task requests of the task center and the monitor, typed by the generated schema.
import { api, call } from '../../api/client';
import type { components } from '../../api/schema';
import type { GraphSpec } from '../../api/types';
import type { ResidualsReport, ScatterReport } from '../monitor/chartOptions';
import type { TaskListSort, TaskStatus } from './format';

type Schemas = components['schemas'];
export type TaskPublic = Schemas['TaskPublic'];
export type TaskDetail = Omit<Schemas['TaskDetail'], 'graph'> & { graph: GraphSpec };
export type MetricPoint = Schemas['MetricPoint'];
export type TaskLog = Schemas['TaskLog'];

/** report.json of a finished run (src/dragdl/engine/train/evaluate.py and trainer.py). */
export interface PerClassRow {
  class: string;
  precision: number;
  recall: number;
  f1: number;
  support: number;
}

export interface TaskReport {
  /** The task kind (engine/tasks): "classification" or "regression"; absent in older reports. */
  task?: string;
  classes: string[];
  per_class?: PerClassRow[];
  averages?: Record<string, number>;
  confusion_matrix?: number[][];
  test?: Record<string, number> | null;
  best_epoch?: number | null;
  monitor?: string;
  epochs_completed?: number;
  stopped_early?: boolean;
  device?: string;
  parameters?: { trainable: number; total: number };
  timings?: Record<string, number>;
  /** Regression: test-set (actual, predicted) pairs and the residual histogram. */
  scatter?: ScatterReport;
  residuals?: ResidualsReport;
}

const taskPath = (taskId: string) => ({ params: { path: { task_id: taskId } } });
const detail = (task: Schemas['TaskDetail']): TaskDetail => ({ ...task, graph: task.graph as unknown as GraphSpec });

export async function listTasks(
  status: TaskStatus | null,
  offset: number,
  limit: number,
  sort: TaskListSort = 'newest',
): Promise<{ data: TaskPublic[]; count: number }> {
  const query = status ? { status, offset, limit, sort } : { offset, limit, sort };
  return call(() => api.GET('/api/tasks', { params: { query } }));
}

export async function getTask(taskId: string): Promise<TaskDetail> {
  return detail(await call(() => api.GET('/api/tasks/{task_id}', taskPath(taskId))));
}

export function stopTask(taskId: string): Promise<TaskPublic> {
  return call(() => api.POST('/api/tasks/{task_id}/stop', taskPath(taskId)));
}

export function retryTask(taskId: string): Promise<TaskPublic> {
  return call(() => api.POST('/api/tasks/{task_id}/retry', taskPath(taskId)));
}

/** Queue a graph for training: the current version of a saved graph, or the graph JSON itself.
 * A graph that does not validate is refused with 422 and its problems (see editor/logic/train.ts). */
export async function submitTask(
  source: { graph_id: string } | { graph: GraphSpec },
  name?: string,
): Promise<TaskDetail> {
  const graph = 'graph' in source ? { graph: source.graph as unknown as { [key: string]: unknown } } : source;
  const body = { ...graph, priority: 0, ...(name ? { name } : {}) };
  return detail(await call(() => api.POST('/api/tasks', { body })));
}

/** A new task with the same graph, trained from scratch. */
export async function cloneTask(taskId: string): Promise<TaskDetail> {
  return detail(await call(() => api.POST('/api/tasks/{task_id}/clone', taskPath(taskId))));
}

export async function deleteTask(taskId: string): Promise<void> {
  await call(() => api.DELETE('/api/tasks/{task_id}', taskPath(taskId)));
}

export async function getMetrics(taskId: string, scope?: 'step' | 'epoch' | 'test'): Promise<MetricPoint[]> {
  const params = { path: { task_id: taskId }, query: scope ? { scope } : {} };
  return (await call(() => api.GET('/api/tasks/{task_id}/metrics', { params }))).data;
}

export function getLogs(taskId: string, offset: number): Promise<TaskLog> {
  return call(() => api.GET('/api/tasks/{task_id}/logs', { params: { path: { task_id: taskId }, query: { offset } } }));
}

export async function getReport(taskId: string): Promise<TaskReport> {
  const data = await call(() => api.GET('/api/tasks/{task_id}/report', taskPath(taskId)));
  return data as unknown as TaskReport;
}

export function eventsUrl(taskId: string, after?: number): string {
  const base = `/api/tasks/${encodeURIComponent(taskId)}/events`;
  return after ? `${base}?after=${after}` : base;
}
