// Copy and paste of a selection: the nodes, and the edges that run between them.
import type { JsonObject } from '../../../api/types';
import type { EditorEdge, EditorNode } from './types';

export interface ClipboardContent {
  nodes: { id: string; kind: string; params: JsonObject; label?: string; position: { x: number; y: number } }[];
  edges: { source: string; target: string; sourceHandle: string | null; targetHandle: string | null }[];
}

export function copySelection(nodes: readonly EditorNode[], edges: readonly EditorEdge[]): ClipboardContent | null {
  const chosen = nodes.filter((node) => node.selected);
  if (!chosen.length) return null;
  const ids = new Set(chosen.map((node) => node.id));
  return {
    nodes: chosen.map((node) => ({
      id: node.id,
      kind: node.data.kind,
      params: structuredClone(node.data.params),
      ...(node.data.label ? { label: node.data.label } : {}),
      position: { ...node.position },
    })),
    edges: edges
      .filter((edge) => ids.has(edge.source) && ids.has(edge.target))
      .map((edge) => ({
        source: edge.source,
        target: edge.target,
        sourceHandle: edge.sourceHandle ?? null,
        targetHandle: edge.targetHandle ?? null,
      })),
  };
}

/** A fresh id from the node type: "layer.Conv2d" -> "conv2d-1", "conv2d-2", ... */
export function nextNodeId(kind: string, taken: ReadonlySet<string>): string {
  const base =
    (kind.split('.').pop() ?? 'node')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '')
      .slice(0, 40) || 'node';
  for (let n = 1; ; n++) {
    const id = `${base}-${n}`;
    if (!taken.has(id)) return id;
  }
}

/** The clipboard with new ids (nothing collides with `taken`), moved by `offset`. */
export function pasteClipboard(
  clip: ClipboardContent,
  taken: ReadonlySet<string>,
  offset: { x: number; y: number },
): ClipboardContent {
  const used = new Set(taken);
  const rename = new Map<string, string>();
  for (const node of clip.nodes) {
    const id = nextNodeId(node.kind, used);
    used.add(id);
    rename.set(node.id, id);
  }
  return {
    nodes: clip.nodes.map((node) => ({
      ...node,
      id: rename.get(node.id)!,
      params: structuredClone(node.params),
      position: { x: node.position.x + offset.x, y: node.position.y + offset.y },
    })),
    edges: clip.edges.map((edge) => ({ ...edge, source: rename.get(edge.source)!, target: rename.get(edge.target)! })),
  };
}
