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
  if (field.kind === 'enum' || field.kind === 'boolean') return 'choice';
  return null;
}

export const isScalar = (value: unknown): value is SearchScalar =>
  typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean';

/** A first search around the field's current value, inside its bounds: the user narrows it. */
export function defaultSpec(field: FieldSpec, value: JsonValue | undefined): SearchSpec | null {
  const kind = searchKind(field);
  const current = value === undefined ? field.default : value;
  if (kind === 'choice') {
    const options = field.kind === 'boolean' ? [true, false] : (field.options ?? []).filter(isScalar);
    return options.length ? { type: 'choice', values: options } : null;
  }
  if (kind === null) return null;
  const low = field.minimum ?? field.exclusiveMinimum;
  const high = field.maximum ?? field.exclusiveMaximum;
  const base = typeof current === 'number' && Number.isFinite(current) && current !== 0 ? current : null;
  if (kind === 'int') {
    const centre = base ?? Math.max(1, low ?? 1);
    const from = Math.max(low ?? -Infinity, Math.floor(centre / 2));
    const to = Math.min(high ?? Infinity, Math.max(from + 1, centre * 2));
    return { type: 'int', low: from, high: to, log: false, step: 1 };
  }
  if (base !== null && base > 0) {
    // A positive real (a learning rate, a weight decay): a decade either side, on a log scale.
    const from = Math.max(low ?? 0, base / 10);
    const to = Math.min(high ?? Infinity, base * 10);
    if (from > 0 && to > from) return { type: 'float', low: round(from), high: round(to), log: true };
  }
  const from = low ?? 0;
  const to = high ?? from + 1;
  return { type: 'float', low: from, high: field.exclusiveMaximum !== undefined ? round(to * 0.9) : to, log: false };
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
