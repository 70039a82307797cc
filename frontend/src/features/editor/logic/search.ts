// The graph's search section (engine/graph/search.py): which params of a node a sweep samples, and
// how. In the editor each node carries its own part (`data.search`), so marking a param is a node
// change like any other (one undo step, gone with the node); the graph file keeps the section at
// the graph level, `search[nodeId][param]`, which the server validates.
import type { JsonValue } from '../../../api/types';
import type { FieldSpec } from './schemaForm';

export type SearchScalar = number | string | boolean;

export type SearchSpec =
  | { type: 'float'; low: number; high: number; log?: boolean; step?: number | null }
  | { type: 'int'; low: number; high: number; log?: boolean; step?: number }
  | { type: 'choice'; values: SearchScalar[] };

/** node id -> param -> how it is searched. */
export type SearchSection = Record<string, Record<string, SearchSpec>>;

/** How a field may be searched: a range of reals or whole numbers, a list of choices, or not at all. */
export function searchKind(field: FieldSpec): 'float' | 'int' | 'choice' | null {
  if (field.locked) return null;
  if (field.kind === 'number') return 'float';
  if (field.kind === 'integer') return 'int';
  // An optional number ('auto' | int: a Linear's width) is searched as its number.
  if (field.kind === 'choiceOrNumber') return field.integer ? 'int' : 'float';
  if (field.kind === 'enum' || field.kind === 'boolean') return 'choice';
  return null;
}

/** Whole numbers: an integer field, or the number of a choice-or-number field. */
export const isWholeField = (field: FieldSpec) =>
  field.kind === 'integer' || (field.kind === 'choiceOrNumber' && field.integer === true);

export const isScalar = (value: unknown): value is SearchScalar =>
  typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean';

/**
 * `value` moved inside the field's bounds: onto `minimum`/`maximum`, or just inside an exclusive
 * bound (a Dropout probability below 1 becomes 0.99, never 1; a learning rate above 0 keeps 1e-4).
 */
export function clampToField(field: FieldSpec, value: number, whole: boolean): number {
  const { minimum, maximum, exclusiveMinimum: above, exclusiveMaximum: below } = field;
  const span = (maximum ?? below ?? NaN) - (minimum ?? above ?? NaN);
  const margin = (bound: number) => (whole ? 1 : Number.isFinite(span) ? span * 0.01 : Math.abs(bound) * 0.01 || 0.01);
  let v = value;
  if (minimum !== undefined && v < minimum) v = minimum;
  if (above !== undefined && v <= above) v = above + margin(above);
  if (maximum !== undefined && v > maximum) v = maximum;
  if (below !== undefined && v >= below) v = below - margin(below);
  return whole ? Math.round(v) : round(v);
}

/**
 * A first search around the field's current value, inside its own bounds (exclusive ones too): the
 * user narrows it. Every searchable param of the catalog pre-fills a range its model accepts.
 */
export function defaultSpec(field: FieldSpec, value: JsonValue | undefined): SearchSpec | null {
  const kind = searchKind(field);
  const current = value === undefined ? field.default : value;
  if (kind === 'choice') {
    const options = field.kind === 'boolean' ? [true, false] : (field.options ?? []).filter(isScalar);
    return options.length ? { type: 'choice', values: options } : null;
  }
  if (kind === null) return null;
  const whole = kind === 'int';
  const clip = (v: number) => clampToField(field, v, whole);
  const base = typeof current === 'number' && Number.isFinite(current) && current !== 0 ? current : null;
  if (whole) {
    // No number yet ('auto'): a width's usual span, 16 to 256 on a log scale.
    if (base === null && field.kind === 'choiceOrNumber') {
      const from = clip(16);
      const to = clip(256);
      if (to > from) return { type: 'int', low: from, high: to, log: from > 0, step: 1 };
    }
    const centre = base ?? clip(1);
    const from = clip(Math.floor(centre / 2));
    const to = clip(Math.max(from + 1, centre * 2));
    return { type: 'int', low: from, high: to, log: false, step: 1 };
  }
  const low = field.minimum ?? field.exclusiveMinimum;
  const high = field.maximum ?? field.exclusiveMaximum;
  // A value in an interval of at most 1 (a probability, a momentum): linear, half of it either side.
  const narrow = low !== undefined && high !== undefined && high - low <= 1;
  if (base !== null && base > 0 && !narrow) {
    // A positive real with room (a learning rate, a weight decay): a decade either side, log scale.
    const from = clip(base / 10);
    const to = clip(base * 10);
    if (from > 0 && to > from) return { type: 'float', low: from, high: to, log: true };
  }
  if (base !== null && narrow) {
    const from = clip(base - (high - low) / 4);
    const to = clip(base + (high - low) / 4);
    if (to > from) return { type: 'float', low: from, high: to, log: false };
  }
  const from = clip(low ?? 0);
  return { type: 'float', low: from, high: clip(high ?? from + 1), log: false };
}

const round = (value: number) => Number(value.toPrecision(6));

/** Why a spec cannot be sent as it is (the server says the rest), or null. */
export function specProblem(spec: SearchSpec): 'range' | 'log' | 'choices' | null {
  if (spec.type === 'choice') return spec.values.length ? null : 'choices';
  if (!Number.isFinite(spec.low) || !Number.isFinite(spec.high) || spec.low >= spec.high) return 'range';
  if (spec.log && spec.low <= 0) return 'log';
  return null;
}

/** The section of a graph from its nodes' parts, or undefined when nothing is searched. */
export function collectSearch(
  nodes: readonly { id: string; data: { search?: Record<string, SearchSpec> } }[],
): SearchSection | undefined {
  const section: SearchSection = {};
  for (const node of nodes) {
    if (node.data.search && Object.keys(node.data.search).length) section[node.id] = node.data.search;
  }
  return Object.keys(section).length ? section : undefined;
}

/** How many params are searched in all. */
export function searchedCount(section: SearchSection | null | undefined): number {
  return Object.values(section ?? {}).reduce((sum, params) => sum + Object.keys(params).length, 0);
}

/** `spec` for `param` in a node's part (undefined: no longer searched); undefined when none is left. */
export function withSpec(
  part: Record<string, SearchSpec> | undefined,
  param: string,
  spec: SearchSpec | undefined,
): Record<string, SearchSpec> | undefined {
  const next = { ...(part ?? {}) };
  if (spec === undefined) delete next[param];
  else next[param] = spec;
  return Object.keys(next).length ? next : undefined;
}

/** A list of choices typed by the user ("32, 64, 128" or "adam, sgd"): numbers stay numbers. */
export function parseChoices(text: string, numeric: boolean): SearchScalar[] | null {
  const parts = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  if (!numeric) return parts.length ? parts : null;
  const numbers = parts.map(Number);
  return numbers.length && numbers.every(Number.isFinite) ? numbers : null;
}
