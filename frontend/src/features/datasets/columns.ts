// How a table column's categories are shown: the first few values the server lists, and the real
// count, which `category_count` holds (an uploaded table's stored description lists at most 20).
import type { components } from '../../api/schema';

export type ColumnPublic = components['schemas']['ColumnPublic'];

/** The values shown in the columns table. */
export const SHOWN_CATEGORIES = 12;

export interface CategorySummary {
  /** The first values, as the server sorted them. */
  shown: string[];
  /** How many values the column holds in all (not only those listed). */
  count: number;
  /** Values beyond those shown. */
  more: number;
}

export function categorySummary(column: ColumnPublic, limit = SHOWN_CATEGORIES): CategorySummary {
  const listed = column.categories ?? [];
  const shown = listed.slice(0, limit);
  const count = Math.max(column.category_count ?? 0, listed.length);
  return { shown, count, more: count - shown.length };
}
