// Task kinds in the UI: which kind a graph trains (its train node, found by the catalog's
// category, never by a type-name prefix), and which metrics each kind charts and reports.
// The engine's kinds live in src/dragdl/engine/tasks/; a new kind adds its names here.
import type { GraphNodeSpec, GraphSpec } from '../../api/types';
import type { CatalogIndex } from './catalogIndex';

export const TASK_KINDS = ['classification', 'regression'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];
/** Old reports, bundles and graphs name no kind: they are classification. */
export const DEFAULT_KIND: TaskKind = 'classification';

/** The kind a value names, or null when it names none we know. */
export function asKind(value: unknown): TaskKind | null {
  return (TASK_KINDS as readonly unknown[]).includes(value) ? (value as TaskKind) : null;
}

/** The graph's train node: the first node whose catalog entry is in the "train" category. */
export function trainNodeOf(graph: Pick<GraphSpec, 'nodes'>, catalog: CatalogIndex): GraphNodeSpec | null {
  return graph.nodes.find((node) => catalog.byType.get(node.type)?.category === 'train') ?? null;
}

/** The kind the graph's train node names in the catalog; null without one (or an older server). */
export function graphKind(graph: Pick<GraphSpec, 'nodes'>, catalog: CatalogIndex): TaskKind | null {
  const node = trainNodeOf(graph, catalog);
  return node ? asKind(catalog.byType.get(node.type)?.task) : null;
}

/**
 * The kind the metrics of a run say: regression runs report r2/mae/rmse, classification runs
 * accuracy. Null while there are none yet.
 */
export function kindFromMetrics(keys: Iterable<string>): TaskKind | null {
  for (const key of keys) {
    const base = key.replace(/^(val_|test_)/, '');
    if (base === 'r2' || base === 'mae' || base === 'rmse') return 'regression';
    if (base === 'accuracy' || base === 'top5_accuracy') return 'classification';
  }
  return null;
}

/** The first kind known among the sources, in the order given; classification when none is. */
export function resolveKind(...sources: (TaskKind | null | undefined)[]): TaskKind {
  return sources.find((kind): kind is TaskKind => !!kind) ?? DEFAULT_KIND;
}

/** One epoch metric a kind charts: its name without the val_/test_ prefix. */
export interface KindMetric {
  key: string;
  /** A share in 0..1, shown as a percentage. */
  percent: boolean;
  /** Whether a higher value is better (the best validation value is the highest). */
  higherIsBetter: boolean;
}

/** The metrics besides the loss each kind charts, in display order (TaskKind.metrics). */
export const KIND_METRICS: Record<TaskKind, readonly KindMetric[]> = {
  classification: [{ key: 'accuracy', percent: true, higherIsBetter: true }],
  regression: [
    { key: 'mae', percent: false, higherIsBetter: false },
    { key: 'rmse', percent: false, higherIsBetter: false },
    { key: 'r2', percent: false, higherIsBetter: true },
  ],
};

/** The metric that sums up a kind's run in one figure (KPIs, model list): accuracy or R². */
export const HEADLINE_METRIC: Record<TaskKind, KindMetric> = {
  classification: KIND_METRICS.classification[0]!,
  regression: KIND_METRICS.regression[2]!,
};
