// The header's best epoch: the epoch the run keeps as its best, chosen by the metric its train
// node watches (`monitor`, val_loss unless set) in that metric's direction, as the trainer chooses
// report.json's best_epoch. The header once took the epoch of the best accuracy, which is the first
// epoch when accuracy stays flat while the loss falls, and contradicted the report.
import type { GraphSpec } from '../../api/types';
import type { CatalogIndex } from '../catalog/catalogIndex';
import { kindMetrics, trainNodeOf, type TaskKind } from '../catalog/taskKind';
import type { MonitorState } from './series';

export interface BestEpoch {
  epoch: number;
  /** The watched metric's value at that epoch. */
  value: number;
  /** That epoch's validation loss, null when it reported none. */
  loss: number | null;
}

/** The metric a run watches for its best weights, and which way is better. */
export interface Watched {
  /** As the train node names it: `val_loss`, `val_accuracy`, `val_r2`, ... */
  metric: string;
  higherIsBetter: boolean;
}

const DEFAULT_MONITOR = 'val_loss';

/** The metric the graph's train node watches (its `monitor` param, else val_loss), with the
 * direction the kind's catalog entry gives it; the loss is always lower-is-better. */
export function watchedMetric(
  graph: Pick<GraphSpec, 'nodes'> | null | undefined,
  catalog: CatalogIndex,
  kind: TaskKind | null,
): Watched {
  const param = graph ? trainNodeOf(graph, catalog)?.params?.monitor : undefined;
  const metric = typeof param === 'string' && param.startsWith('val_') ? param : DEFAULT_MONITOR;
  const key = metric.slice('val_'.length);
  const found = kindMetrics(catalog, kind).find((entry) => entry.key === key);
  return { metric, higherIsBetter: found?.higherIsBetter ?? false };
}

/** The epoch with the best watched value (the first of equal ones, as the trainer keeps it), or
 * null before any. */
export function bestEpoch(state: MonitorState, watched: Watched): BestEpoch | null {
  let best: BestEpoch | null = null;
  for (const point of state.epochPoints) {
    const value = point.values[watched.metric];
    if (value === undefined || !Number.isFinite(value)) continue;
    if (best === null || (watched.higherIsBetter ? value > best.value : value < best.value)) {
      best = { epoch: point.epoch, value, loss: point.values.val_loss ?? null };
    }
  }
  return best;
}
