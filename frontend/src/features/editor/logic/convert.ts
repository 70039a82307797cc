// Graph file (ARCHITECTURE.md section 2) <-> React Flow nodes and edges.
import type { GraphEdgeSpec, GraphNodeSpec, GraphSpec, JsonObject } from '../../../api/types';
import { findPort, type CatalogIndex } from '../../catalog/catalogIndex';
import { layeredLayout, type LayoutView } from './layout';
import { collectSearch, type SearchSection, type SearchSpec } from './search';
import type { EditorEdge, EditorNode, EditorNodeData, GraphMeta, NodeCategory, Snapshot } from './types';

export function categoryOf(kind: string, catalog: CatalogIndex): NodeCategory {
  return catalog.byType.get(kind)?.category ?? 'unknown';
}

export function makeNode(
  id: string,
  kind: string,
  params: JsonObject,
  position: { x: number; y: number },
  catalog: CatalogIndex,
  label?: string | null,
  search?: Record<string, SearchSpec>,
): EditorNode {
  const data: EditorNodeData = label ? { kind, params, label } : { kind, params };
  if (search && Object.keys(search).length) data.search = search;
  return { id, type: categoryOf(kind, catalog), position, data } as EditorNode;
}

/** An edge with both handles named, so React Flow draws it on the right port. */
export function makeEdge(
  spec: GraphEdgeSpec,
  catalog: CatalogIndex,
  kinds: ReadonlyMap<string, string>,
  id: string,
): EditorEdge {
  const sourceEntry = catalog.byType.get(kinds.get(spec.source) ?? '');
  const targetEntry = catalog.byType.get(kinds.get(spec.target) ?? '');
  const sourceHandle =
    spec.sourceHandle ?? (sourceEntry ? findPort(sourceEntry.outputs, null)?.name : undefined) ?? 'out';
  const targetHandle =
    spec.targetHandle ?? (targetEntry ? findPort(targetEntry.inputs, null)?.name : undefined) ?? 'in';
  return { id, type: 'shape', source: spec.source, target: spec.target, sourceHandle, targetHandle };
}

/** Nodes without a position are laid out (all of them) for `view`, by default a landscape one. */
export function graphToFlow(
  graph: GraphSpec,
  catalog: CatalogIndex,
  view: LayoutView = { aspect: 1.4 },
): { nodes: EditorNode[]; edges: EditorEdge[]; meta: GraphMeta } {
  const kinds = new Map(graph.nodes.map((node) => [node.id, node.type]));
  let nodes = graph.nodes.map((node) =>
    makeNode(
      node.id,
      node.type,
      { ...(node.params ?? {}) },
      node.position ?? { x: 0, y: 0 },
      catalog,
      node.label,
      graph.search?.[node.id],
    ),
  );
  const usedIds = new Set<string>();
  const edges = graph.edges.map((edge, index) => {
    let id = edge.id ?? `e-${edge.source}-${edge.target}`;
    if (usedIds.has(id)) id = `${id}-${index}`;
    usedIds.add(id);
    return makeEdge(edge, catalog, kinds, id);
  });
  if (graph.nodes.some((node) => !node.position)) {
    const positions = layeredLayout(nodes, edges, view);
    nodes = nodes.map((node) => ({ ...node, position: positions.get(node.id) ?? node.position }));
  }
  return { nodes, edges, meta: { name: graph.name || 'Untitled', description: graph.description ?? '' } };
}

export function flowToGraph(nodes: readonly EditorNode[], edges: readonly EditorEdge[], meta: GraphMeta): GraphSpec {
  const search = collectSearch(nodes);
  return {
    version: 1,
    name: meta.name,
    description: meta.description,
    nodes: nodes.map((node): GraphNodeSpec => {
      const spec: GraphNodeSpec = {
        id: node.id,
        type: node.data.kind,
        params: node.data.params,
        position: { x: Math.round(node.position.x), y: Math.round(node.position.y) },
      };
      if (node.data.label) spec.label = node.data.label;
      return spec;
    }),
    // Edge order is kept: it is the input order of Add and Concat.
    edges: edges.map((edge) => ({
      id: edge.id,
      source: edge.source,
      target: edge.target,
      sourceHandle: edge.sourceHandle ?? null,
      targetHandle: edge.targetHandle ?? null,
    })),
    ...(search ? { search } : {}),
  };
}

/** The parts of a graph validation depends on: moving a node or renaming the graph changes nothing. */
export function validationKey(graph: GraphSpec): string {
  return JSON.stringify([
    graph.nodes.map((node) => [node.id, node.type, node.params ?? {}]),
    graph.edges.map((edge) => [edge.source, edge.target, edge.sourceHandle ?? null, edge.targetHandle ?? null]),
    graph.search ?? null,
  ]);
}

/** Nodes and edges stripped to what undo should restore. */
export function snapshotOf(nodes: readonly EditorNode[], edges: readonly EditorEdge[]): Snapshot {
  return {
    nodes: nodes.map(
      (node) => ({ id: node.id, type: node.type, position: node.position, data: node.data }) as EditorNode,
    ),
    edges: edges.map((edge): EditorEdge => ({
      id: edge.id,
      type: 'shape',
      source: edge.source,
      target: edge.target,
      sourceHandle: edge.sourceHandle ?? null,
      targetHandle: edge.targetHandle ?? null,
    })),
  };
}

export type ParsedGraph =
  { ok: true; graph: GraphSpec } | { ok: false; reason: 'notJson' | 'noNodes' | 'badVersion'; version?: string };

/** Read an imported file; the server's validation reports everything finer than this. */
export function parseGraphJson(text: string): ParsedGraph {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'notJson' };
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return { ok: false, reason: 'noNodes' };
  const record = data as Record<string, unknown>;
  if (record.version !== undefined && record.version !== 1) {
    return { ok: false, reason: 'badVersion', version: String(record.version) };
  }
  const nodes = record.nodes;
  if (
    !Array.isArray(nodes) ||
    !nodes.every((n) => n && typeof n === 'object' && typeof n.id === 'string' && typeof n.type === 'string')
  ) {
    return { ok: false, reason: 'noNodes' };
  }
  const edges = Array.isArray(record.edges) ? record.edges : [];
  return {
    ok: true,
    graph: {
      version: 1,
      name: typeof record.name === 'string' ? record.name : 'Untitled',
      description: typeof record.description === 'string' ? record.description : '',
      nodes: nodes as GraphNodeSpec[],
      edges: (edges as unknown[]).filter(
        (e): e is GraphEdgeSpec =>
          !!e &&
          typeof e === 'object' &&
          typeof (e as GraphEdgeSpec).source === 'string' &&
          typeof (e as GraphEdgeSpec).target === 'string',
      ),
      ...(record.search && typeof record.search === 'object' ? { search: record.search as SearchSection } : {}),
    },
  };
}
