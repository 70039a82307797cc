// The canvas side of the edge rules the server also checks (analysis/structure.py):
// exact port types, one edge into a single input, no self-loops, no cycles, no duplicates.
import { findPort, producedType, type CatalogIndex } from '../../catalog/catalogIndex';

export interface ConnectionLike {
  source: string;
  target: string;
  sourceHandle?: string | null;
  targetHandle?: string | null;
}

interface NodeLike {
  id: string;
  data: { kind: string; label?: string };
}

export type RefusalReason = 'self' | 'cycle' | 'type' | 'needsLayer' | 'taken' | 'duplicate' | 'port';

/** What layers produce and train nodes take: data (images, a table, sequences) must pass a layer
 * first, and a refusal says so instead of naming port types. */
const NETWORK_TYPES = new Set(['tensor', 'logits']);

export type ConnectionVerdict = { ok: true } | { ok: false; reason: RefusalReason; values: Record<string, string> };

/** The name a person sees for a node: its display name, else the catalog title, else its id. */
export function nodeTitle(node: NodeLike | undefined, catalog: CatalogIndex): string {
  if (!node) return '?';
  return node.data.label || catalog.byType.get(node.data.kind)?.title || node.id;
}

/** Whether `to` can be reached from `from` along the edges. */
export function reaches(from: string, to: string, edges: readonly ConnectionLike[]): boolean {
  const next = new Map<string, string[]>();
  for (const edge of edges) next.set(edge.source, [...(next.get(edge.source) ?? []), edge.target]);
  const seen = new Set<string>([from]);
  const stack = [from];
  while (stack.length) {
    const id = stack.pop()!;
    if (id === to) return true;
    for (const child of next.get(id) ?? []) {
      if (!seen.has(child)) {
        seen.add(child);
        stack.push(child);
      }
    }
  }
  return false;
}

export function checkConnection(
  connection: ConnectionLike,
  nodes: readonly NodeLike[],
  edges: readonly ConnectionLike[],
  catalog: CatalogIndex,
): ConnectionVerdict {
  const source = nodes.find((node) => node.id === connection.source);
  const target = nodes.find((node) => node.id === connection.target);
  const values = { source: nodeTitle(source, catalog), target: nodeTitle(target, catalog) };
  if (connection.source === connection.target) return { ok: false, reason: 'self', values };

  const sourceEntry = source && catalog.byType.get(source.data.kind);
  const targetEntry = target && catalog.byType.get(target.data.kind);
  const outPort = sourceEntry && findPort(sourceEntry.outputs, connection.sourceHandle);
  const inPort = targetEntry && findPort(targetEntry.inputs, connection.targetHandle);
  if (!outPort || !inPort) return { ok: false, reason: 'port', values };

  const produced = producedType(outPort);
  if (!inPort.types.includes(produced)) {
    const needsLayer = !NETWORK_TYPES.has(produced) && inPort.types.every((type) => NETWORK_TYPES.has(type));
    const reason = needsLayer ? 'needsLayer' : 'type';
    return { ok: false, reason, values: { ...values, produced, accepted: inPort.types.join('|') } };
  }
  const into = edges.filter(
    (edge) => edge.target === connection.target && (edge.targetHandle ?? inPort.name) === inPort.name,
  );
  if (into.some((edge) => edge.source === connection.source)) return { ok: false, reason: 'duplicate', values };
  if (!inPort.multiple && into.length > 0) {
    const other = nodes.find((node) => node.id === into[0]!.source);
    return { ok: false, reason: 'taken', values: { ...values, other: nodeTitle(other, catalog) } };
  }
  if (reaches(connection.target, connection.source, edges)) return { ok: false, reason: 'cycle', values };
  return { ok: true };
}
