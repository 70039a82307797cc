// Putting nodes into an existing edge: a node dropped on an edge (from the palette, or dragged
// there) and the table preparation chain are inserted between the edge's two ends, when the port
// types allow both new connections.
import { findPort, type CatalogIndex } from '../../catalog/catalogIndex';
import { checkConnection } from './connection';
import type { EditorEdge, EditorNode } from './types';

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A typical node's size, for one not measured yet (just dropped). */
export const NODE_SIZE = { width: 180, height: 110 };
/** Where an edge leaves and enters a card: the first port row (CatalogNodeCard's layout). */
const PORT_Y = 49;

export function nodeBox(node: Pick<EditorNode, 'position' | 'measured'>): Box {
  return {
    x: node.position.x,
    y: node.position.y,
    width: node.measured?.width ?? NODE_SIZE.width,
    height: node.measured?.height ?? NODE_SIZE.height,
  };
}

type Point = { x: number; y: number };

/** Distance from `p` to the segment a-b. */
function segmentDistance(p: Point, a: Point, b: Point): number {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const length2 = dx * dx + dy * dy;
  const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length2));
  return Math.hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
}

/**
 * The edge a node at `box` was dropped on: the one whose line passes closest to the node's centre,
 * within the node's half height, between two other nodes. The drawn edge is a curve between the
 * two ports; the straight line between them is close enough to tell which edge a node lies on.
 */
export function edgeUnder(
  box: Box,
  nodeId: string,
  nodes: readonly EditorNode[],
  edges: readonly EditorEdge[],
): EditorEdge | null {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const centre = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  let best: { edge: EditorEdge; distance: number } | null = null;
  for (const edge of edges) {
    if (edge.source === nodeId || edge.target === nodeId) continue;
    const source = byId.get(edge.source);
    const target = byId.get(edge.target);
    if (!source || !target) continue;
    const from = nodeBox(source);
    const to = nodeBox(target);
    const a = { x: from.x + from.width, y: from.y + PORT_Y };
    const b = { x: to.x, y: to.y + PORT_Y };
    // The centre must lie between the ends: a node beside a node is not on its edge.
    if (centre.x < Math.min(a.x, b.x) || centre.x > Math.max(a.x, b.x)) continue;
    const distance = segmentDistance(centre, a, b);
    if (distance <= box.height / 2 && (!best || distance < best.distance)) best = { edge, distance };
  }
  return best?.edge ?? null;
}

let counter = 0;
const freshEdgeId = (source: string, target: string, taken: ReadonlySet<string>) => {
  const base = `e-${source}-${target}`;
  if (!taken.has(base)) return base;
  for (;;) {
    counter += 1;
    const id = `${base}-${counter}`;
    if (!taken.has(id)) return id;
  }
};

/**
 * The edges once `chain` (node ids, in order, already among `nodes` and unconnected) is put into
 * `edge`: source -> chain[0] -> ... -> chain[n-1] -> target. Null when a port type refuses any of
 * the new connections (a table operator on an images edge): the edges then stay as they are.
 */
export function insertIntoEdge(
  chain: readonly string[],
  edge: EditorEdge,
  nodes: readonly EditorNode[],
  edges: readonly EditorEdge[],
  catalog: CatalogIndex,
): EditorEdge[] | null {
  if (!chain.length || chain.includes(edge.source) || chain.includes(edge.target)) return null;
  const rest = edges.filter((other) => other.id !== edge.id);
  if (rest.some((other) => chain.includes(other.source) || chain.includes(other.target))) return null;
  const stops = [edge.source, ...chain, edge.target];
  const added: EditorEdge[] = [];
  const taken = new Set(rest.map((other) => other.id));
  for (let i = 0; i + 1 < stops.length; i++) {
    const source = stops[i]!;
    const target = stops[i + 1]!;
    const kindOf = (id: string) => nodes.find((node) => node.id === id)?.data.kind ?? '';
    const sourceHandle =
      i === 0 ? edge.sourceHandle : findPort(catalog.byType.get(kindOf(source))?.outputs ?? [], null)?.name;
    const targetHandle =
      i + 2 === stops.length
        ? edge.targetHandle
        : findPort(catalog.byType.get(kindOf(target))?.inputs ?? [], null)?.name;
    const connection = { source, target, sourceHandle: sourceHandle ?? null, targetHandle: targetHandle ?? null };
    if (!checkConnection(connection, nodes, [...rest, ...added], catalog).ok) return null;
    const id = freshEdgeId(source, target, taken);
    taken.add(id);
    added.push({ id, type: 'shape', ...connection });
  }
  // The new edges take the old one's place in the list, so the drawing order stays.
  const at = edges.findIndex((other) => other.id === edge.id);
  return [...edges.slice(0, at), ...added, ...edges.slice(at + 1)];
}
