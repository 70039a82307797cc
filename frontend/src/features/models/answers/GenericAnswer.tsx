import { useCatalog } from '../../catalog/CatalogProvider';
import { kindEntry } from '../../catalog/taskKind';
import type { AnswerSummaryProps } from './types';

/** A kind without a view of its own: its title, as the catalog names it. */
export function GenericAnswer({ model }: AnswerSummaryProps) {
  const { index } = useCatalog();
  return <span className="muted">{kindEntry(index, model.task)?.title ?? model.task}</span>;
}
