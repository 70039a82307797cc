// The few params a node card prints under its title, shapes and the dataset's summary.
import type { DatasetSummary, JsonObject, JsonSchema, JsonValue } from '../../../api/types';

/** Params people look for first; the others follow in declaration order. */
const PRIORITY = [
  'name',
  'backbone',
  'model_name',
  'path',
  'categories',
  'preset',
  'expression',
  'out_channels',
  'out_features',
  'kernel_size',
  'output_size',
  'height',
  'p',
  'degrees',
  'epochs',
  'batch_size',
  'optimizer',
  'lr',
];

/** An enum value by its label in the catalog's language (`x-enum-labels`), else as it is. */
function choiceLabel(property: JsonSchema | undefined, value: JsonValue): JsonValue {
  const choices = [property, ...(property?.anyOf ?? [])];
  for (const choice of choices) {
    const options = choice?.enum ?? (choice?.const !== undefined ? [choice.const] : []);
    const index = options.findIndex((option) => option === value);
    const label = index >= 0 ? choice?.['x-enum-labels']?.[index] : undefined;
    if (label !== undefined) return label;
  }
  return value;
}

function short(value: JsonValue): string {
  if (typeof value === 'boolean') return value ? '✓' : '✗';
  if (Array.isArray(value)) return value.map((v) => short(v)).join(', ');
  if (value !== null && typeof value === 'object') return '{…}';
  const text = String(value);
  return text.length > 22 ? `${text.slice(0, 21)}…` : text;
}

export function summarizeParams(
  params: JsonObject,
  schema: JsonSchema,
  max = 3,
): { name: string; label: string; value: string }[] {
  const names = Object.keys(schema.properties ?? {});
  const rank = (name: string) => {
    const i = PRIORITY.indexOf(name);
    return i === -1 ? PRIORITY.length + names.indexOf(name) : i;
  };
  return names
    .filter((name) => params[name] !== undefined && params[name] !== null && params[name] !== '')
    .sort((a, b) => rank(a) - rank(b))
    .slice(0, max)
    .map((name) => ({
      name,
      label: schema.properties?.[name]?.title ?? name,
      value: short(choiceLabel(schema.properties?.[name], params[name]!)),
    }));
}

/** "16x28x28" -> "16×28×28", "3x?x?" -> "3×?×?"; words ("13 features") stay as they are (an input
 * type words its own shapes again: features/inputs/registry.ts edgeLabel). */
export function prettyShape(shape: string): string {
  return shape.replace(/([\d?])x(?=[\d?])/g, '$1×');
}

/** A table dataset's facts for the summary; null for images (validation sends no columns). */
export interface TableFacts {
  rows: number;
  columns: number;
  numbers: number;
  categories: number;
  /** Columns with at least one missing value. */
  withMissing: number;
  target: string | null;
  /** Classes of a classification target; 0 for a numeric (regression) target. */
  classes: number;
  /** Rows left out because their target is empty, and the first of them as numbered in the file. */
  missingTargets: number;
  missingTargetRows: string;
}

/** A table's facts as validation read them; null for another input type. */
export function tableFacts(dataset: DatasetSummary): TableFacts | null {
  if (!Array.isArray(dataset.columns)) return null;
  const columns = dataset.columns;
  return {
    rows: dataset.count,
    columns: columns.length,
    numbers: columns.filter((column) => column.kind === 'number').length,
    categories: columns.filter((column) => column.kind === 'category').length,
    withMissing: columns.filter((column) => column.missing > 0).length,
    target: dataset.target ?? null,
    // The server lists no classes for a kind whose answers are no classes (a regressor's distinct
    // target values): the count is the kind's own.
    classes: dataset.classes.length,
    missingTargets: dataset.missing_targets ?? 0,
    missingTargetRows: listedRows(dataset.missing_targets ?? 0, dataset.missing_target_rows ?? []),
  };
}

/** "4, 272" or, when the server named only the first of them, "4, 272, …". */
function listedRows(count: number, rows: readonly number[]): string {
  return rows.join(', ') + (count > rows.length ? ', …' : '');
}
