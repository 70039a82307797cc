// A sweep's objective in words: "val_r2" is "Validation R²" ("验证集R²"), from the metric
// descriptors the catalog serves in the reader's language (task_kinds[].metrics[].label), so a new
// task kind's metrics are worded without a line here.
import type { TFunction } from 'i18next';
import type { CatalogIndex } from '../catalog/catalogIndex';

/** The objective's metric label, or null for a metric no kind of the catalog describes. */
function metricLabel(key: string, catalog: CatalogIndex, t: TFunction): string | null {
  if (key === 'loss') return t('sweeps.metric.loss');
  for (const kind of catalog.kinds) {
    const found = kind.metrics.find((metric) => metric.key === key);
    if (found) return found.label;
  }
  return null;
}

/** "Validation R²" for val_r2; the name as it is while the catalog does not know it. */
export function objectiveLabel(objective: string, catalog: CatalogIndex, t: TFunction): string {
  const split = /^(val|test)_(.+)$/.exec(objective);
  const label = metricLabel(split ? split[2]! : objective, catalog, t);
  if (label === null) return objective;
  // Inside a phrase a word is not capitalised ("Validation accuracy"); an acronym (MAE, R²) stays.
  const inPhrase = /^[A-Z][a-z]/.test(label) ? label[0]!.toLowerCase() + label.slice(1) : label;
  return split ? t(`sweeps.metric.${split[1]}`, { metric: inPhrase }) : label;
}

/** Whether a sweep has too few complete trials for its importance to mean anything. */
export function tooFewForImportance(detail: { importance_trials?: number; importance_min_trials: number }): boolean {
  return (detail.importance_trials ?? 0) < detail.importance_min_trials;
}
