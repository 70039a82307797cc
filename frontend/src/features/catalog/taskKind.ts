// Task kinds in the UI: which kind a graph trains (its train node, found by the catalog's
// category, never by a type-name prefix), and how each kind's metrics are shown. Everything about
// a kind comes from the catalog's task_kinds (engine/tasks/: MetricSpec, headline), so a new kind
// needs nothing here; its result and answer views are registered in features/monitor/resultViews.ts
// and features/models/answerViews.ts.
import type { GraphNodeSpec, GraphSpec, MetricDescriptor, TaskKindEntry } from '../../api/types';
import type { CatalogIndex } from './catalogIndex';

/** A task kind's name as the server spells it (report.task, model.task, a train node's task). */
export type TaskKind = string;

/** One metric a kind reports: its name without the val_/test_ prefix. */
export interface KindMetric {
  key: string;
  /** In the catalog's language. */
  label: string;
  /** A share in 0..1, shown as a percentage. */
  percent: boolean;
  /** Whether a higher value is better (the best validation value is the highest). */
  higherIsBetter: boolean;
}

/** What a run shows before its kind is known (the catalog still loading): the loss alone. */
export const LOSS_METRIC: KindMetric = { key: 'loss', label: 'loss', percent: false, higherIsBetter: false };

function kindMetric(descriptor: MetricDescriptor): KindMetric {
  return {
    key: descriptor.key,
    label: descriptor.label,
    percent: descriptor.format === 'percent',
    higherIsBetter: descriptor.higher_is_better,
  };
}

/** The kind a value names, or null when the catalog knows no kind of that name. */
export function asKind(value: unknown, catalog: CatalogIndex): TaskKind | null {
  return typeof value === 'string' && catalog.kindByName.has(value) ? value : null;
}

/** The graph's train node: the first node whose catalog entry is in the "train" category. */
export function trainNodeOf(graph: Pick<GraphSpec, 'nodes'>, catalog: CatalogIndex): GraphNodeSpec | null {
  return graph.nodes.find((node) => catalog.byType.get(node.type)?.category === 'train') ?? null;
}

/** The kind the graph's train node names in the catalog; null without one (or an older server). */
export function graphKind(graph: Pick<GraphSpec, 'nodes'>, catalog: CatalogIndex): TaskKind | null {
  const node = trainNodeOf(graph, catalog);
  return node ? asKind(catalog.byType.get(node.type)?.task, catalog) : null;
}

/** The kind whose metrics a run reports (val_r2 says regression, accuracy classification). Null
 * while there are none yet. */
export function kindFromMetrics(keys: Iterable<string>, catalog: CatalogIndex): TaskKind | null {
  for (const key of keys) {
    const base = key.replace(/^(val_|test_)/, '');
    const kind = catalog.kinds.find((entry) => entry.metrics.some((metric) => metric.key === base));
    if (kind) return kind.name;
  }
  return null;
}

/** The first kind known among the sources, in the order given; else the catalog's first kind (what
 * reports and bundles written before task kinds are); null before the catalog has come. */
export function resolveKind(catalog: CatalogIndex, ...sources: (TaskKind | null | undefined)[]): TaskKind | null {
  return sources.find((kind): kind is TaskKind => !!kind) ?? catalog.kinds[0]?.name ?? null;
}

/** The kind's entry in the catalog; null for an unknown kind. */
export function kindEntry(catalog: CatalogIndex, kind: TaskKind | null): TaskKindEntry | null {
  return kind ? (catalog.kindByName.get(kind) ?? null) : null;
}

/** Every metric the kind reports besides the loss, in display order. */
export function kindMetrics(catalog: CatalogIndex, kind: TaskKind | null): KindMetric[] {
  return (kindEntry(catalog, kind)?.metrics ?? []).map(kindMetric);
}

/** The metrics the kind charts as epoch curves (and a sweep may optimise), in display order. */
export function chartedMetrics(catalog: CatalogIndex, kind: TaskKind | null): KindMetric[] {
  return (kindEntry(catalog, kind)?.metrics ?? []).filter((metric) => metric.charted).map(kindMetric);
}

/** The metric that sums up a kind's run in one figure (KPIs, model list): accuracy or R². */
export function headlineMetric(catalog: CatalogIndex, kind: TaskKind | null): KindMetric {
  const entry = kindEntry(catalog, kind);
  const found = entry?.metrics.find((metric) => metric.key === entry.headline);
  return found ? kindMetric(found) : LOSS_METRIC;
}

/** Whether the kind's answers rank the model's classes (top-k, probabilities). */
export function ranksClasses(catalog: CatalogIndex, kind: TaskKind | null): boolean {
  return kindEntry(catalog, kind)?.ranks_classes ?? false;
}
