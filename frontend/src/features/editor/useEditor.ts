// The editor's state: React Flow nodes and edges, graph name, undo history and the actions
// the toolbar, the keyboard and the panels call.
import { applyEdgeChanges, applyNodeChanges, type Connection, type EdgeChange, type NodeChange } from '@xyflow/react';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { GraphSpec, JsonValue } from '../../api/types';
import type { CatalogIndex } from '../catalog/catalogIndex';
import { copySelection, nextNodeId, pasteClipboard, type ClipboardContent } from './logic/clipboard';
import { flowToGraph, graphToFlow, makeNode, snapshotOf } from './logic/convert';
import { canRedo, canUndo, createHistory, record, redo, undo, type History } from './logic/history';
import { edgeUnder, insertIntoEdge, nodeBox } from './logic/insertNode';
import { layeredLayout, type LayoutView } from './logic/layout';
import { defaultParams } from './logic/schemaForm';
import { withSpec, type SearchSpec } from './logic/search';
import { applyPreparation, type Preparation } from './logic/tablePrep';
import type { EditorEdge, EditorNode, GraphMeta, Snapshot } from './logic/types';
import { saveDraft } from './storage';

const AUTOSAVE_DELAY_MS = 400;

function uniqueEdgeId(connection: Connection, edges: readonly EditorEdge[]): string {
  const base = `e-${connection.source}-${connection.target}`;
  const taken = new Set(edges.map((edge) => edge.id));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

export function useEditor(catalog: CatalogIndex, initial: GraphSpec) {
  // The first graph only: later ones come through loadGraph, which records an undo step.
  const [start] = useState(() => graphToFlow(initial, catalog));
  const [nodes, setNodes] = useState<EditorNode[]>(start.nodes);
  const [edges, setEdges] = useState<EditorEdge[]>(start.edges);
  const [meta, setMeta] = useState<GraphMeta>(start.meta);
  // The nodes as last rendered, for actions that must not change with every drag frame.
  const nodesNow = useRef(nodes);
  const edgesNow = useRef(edges);
  useLayoutEffect(() => {
    nodesNow.current = nodes;
    edgesNow.current = edges;
  }, [nodes, edges]);

  // --- history: every settled change of nodes/edges is one step -------------------------------
  const [first] = useState(() => snapshotOf(start.nodes, start.edges));
  const history = useRef<History<Snapshot>>(createHistory(first));
  const lastKey = useRef(JSON.stringify(first));
  const coalesce = useRef<string | null>(null);
  const [flags, setFlags] = useState({ canUndo: false, canRedo: false });
  const syncFlags = () => setFlags({ canUndo: canUndo(history.current), canRedo: canRedo(history.current) });

  useEffect(() => {
    if (nodes.some((node) => node.dragging)) return; // a drag is one step, recorded when it ends
    const snapshot = snapshotOf(nodes, edges);
    const key = JSON.stringify(snapshot);
    if (key === lastKey.current) return; // selection, measuring: nothing to undo
    lastKey.current = key;
    history.current = record(history.current, snapshot, { coalesceKey: coalesce.current });
    coalesce.current = null;
    syncFlags();
  }, [nodes, edges]);

  const restore = useCallback((snapshot: Snapshot) => {
    lastKey.current = JSON.stringify(snapshot);
    setNodes((current) => {
      const measured = new Map(current.map((node) => [node.id, node.measured]));
      return snapshot.nodes.map((node) => ({ ...node, measured: measured.get(node.id) }) as EditorNode);
    });
    setEdges(snapshot.edges.map((edge) => ({ ...edge })));
    syncFlags();
  }, []);

  const undoStep = useCallback(() => {
    const next = undo(history.current);
    if (next === history.current) return;
    history.current = next;
    restore(next.present);
  }, [restore]);

  const redoStep = useCallback(() => {
    const next = redo(history.current);
    if (next === history.current) return;
    history.current = next;
    restore(next.present);
  }, [restore]);

  // --- the draft in localStorage: nothing is lost on reload -------------------------------------
  const graph = useMemo(() => flowToGraph(nodes, edges, meta), [nodes, edges, meta]);
  useEffect(() => {
    if (nodes.some((node) => node.dragging)) return;
    const timer = window.setTimeout(() => saveDraft(graph), AUTOSAVE_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [graph, nodes]);
  // Leaving the editor must not drop the last edits with the pending timer: Train changes the
  // epochs and opens the monitor at once, and the draft is what the editor opens with next time.
  const graphNow = useRef(graph);
  useLayoutEffect(() => {
    graphNow.current = graph;
  }, [graph]);
  useEffect(() => () => void saveDraft(graphNow.current), []);
  // A reload or a closed tab runs no effect clean-up: write the draft as the page goes away, so the
  // edits of the last moments before it are not lost with the pending timer either.
  useEffect(() => {
    const flush = () => void saveDraft(graphNow.current);
    window.addEventListener('pagehide', flush);
    return () => window.removeEventListener('pagehide', flush);
  }, []);

  // --- React Flow callbacks --------------------------------------------------------------------
  const onNodesChange = useCallback(
    (changes: NodeChange<EditorNode>[]) => setNodes((current) => applyNodeChanges(changes, current)),
    [],
  );
  const onEdgesChange = useCallback(
    (changes: EdgeChange<EditorEdge>[]) => setEdges((current) => applyEdgeChanges(changes, current)),
    [],
  );
  const onConnect = useCallback((connection: Connection) => {
    setEdges((current) => [
      ...current,
      {
        id: uniqueEdgeId(connection, current),
        type: 'shape',
        source: connection.source,
        target: connection.target,
        sourceHandle: connection.sourceHandle,
        targetHandle: connection.targetHandle,
      },
    ]);
  }, []);

  // --- actions ---------------------------------------------------------------------------------
  /**
   * Put an unconnected node into the edge it lies on, when the port types allow: the edges change
   * in the same render as the node's move or arrival, so both are one undo step. `moved` is the
   * node as it is now, which the last render may not have yet.
   */
  const insertIntoEdgeUnder = useCallback(
    (moved: EditorNode): boolean => {
      const edges = edgesNow.current;
      if (edges.some((edge) => edge.source === moved.id || edge.target === moved.id)) return false;
      const nodes = [...nodesNow.current.filter((node) => node.id !== moved.id), moved];
      const edge = edgeUnder(nodeBox(moved), moved.id, nodes, edges);
      const next = edge && insertIntoEdge([moved.id], edge, nodes, edges, catalog);
      if (!next) return false;
      edgesNow.current = next;
      setEdges(next);
      return true;
    },
    [catalog],
  );

  const addNode = useCallback(
    (kind: string, position: { x: number; y: number }, { intoEdge = false }: { intoEdge?: boolean } = {}) => {
      const entry = catalog.byType.get(kind);
      if (!entry) return null;
      const id = nextNodeId(kind, new Set(nodesNow.current.map((node) => node.id)));
      const node = makeNode(id, kind, defaultParams(entry.params_schema), position, catalog);
      setNodes((current) => [
        ...current.map((n) => (n.selected ? { ...n, selected: false } : n)),
        { ...node, selected: true } as EditorNode,
      ]);
      if (intoEdge) insertIntoEdgeUnder(node);
      return id;
    },
    [catalog, insertIntoEdgeUnder],
  );

  /** Insert the table preparation validation asks for, as one undo step named `step`. */
  const prepareTable = useCallback(
    (preparation: Preparation, step: string): string[] => {
      const result = applyPreparation(preparation, nodesNow.current, edgesNow.current, catalog);
      if (!result) return [];
      coalesce.current = step;
      setNodes(result.nodes);
      setEdges(result.edges);
      return result.added;
    },
    [catalog],
  );

  const updateParam = useCallback((nodeId: string, name: string, value: JsonValue | undefined) => {
    coalesce.current = `param:${nodeId}:${name}`;
    setNodes((current) =>
      current.map((node) => {
        if (node.id !== nodeId) return node;
        const params = { ...node.data.params };
        if (value === undefined) delete params[name];
        else params[name] = value;
        return { ...node, data: { ...node.data, params } } as EditorNode;
      }),
    );
  }, []);

  /** Mark `name` as searched by a sweep (`spec`), or no longer (undefined): one undo step per edit. */
  const updateSearch = useCallback((nodeId: string, name: string, spec: SearchSpec | undefined) => {
    coalesce.current = `search:${nodeId}:${name}`;
    setNodes((current) =>
      current.map((node) => {
        if (node.id !== nodeId) return node;
        const { search: part, ...data } = node.data;
        const search = withSpec(part, name, spec);
        return { ...node, data: search ? { ...data, search } : data } as EditorNode;
      }),
    );
  }, []);

  const setNodeLabel = useCallback((nodeId: string, label: string) => {
    coalesce.current = `label:${nodeId}`;
    setNodes((current) =>
      current.map((node) => {
        if (node.id !== nodeId) return node;
        const { label: _old, ...data } = node.data;
        return { ...node, data: label ? { ...data, label } : data } as EditorNode;
      }),
    );
  }, []);

  /**
   * Show `next` as one undo step. `step` names it, so that a follow-up with the same name within a
   * second (the layout once the nodes are measured) joins that step; `view` shapes the layout of
   * a graph without positions.
   */
  const loadGraph = useCallback(
    (next: GraphSpec, { view, step }: { view?: LayoutView; step?: string } = {}) => {
      coalesce.current = step ?? null;
      const flow = graphToFlow(next, catalog, view);
      setNodes(flow.nodes);
      setEdges(flow.edges);
      setMeta(flow.meta);
    },
    [catalog],
  );

  /** Lay the graph out in columns, wrapped into bands to show well in `view`. */
  const autoLayout = useCallback((view?: LayoutView, step?: string) => {
    coalesce.current = step ?? null;
    // The edges as last rendered, not as when this callback was made: a layout asked for
    // right after loading a graph runs frames later, on that graph.
    setNodes((current) => {
      const positions = layeredLayout(current, edgesNow.current, view);
      return current.map((node) => ({ ...node, position: positions.get(node.id) ?? node.position }));
    });
  }, []);

  const selectOnly = useCallback((ids: readonly string[]) => {
    const chosen = new Set(ids);
    setNodes((current) => current.map((node) => ({ ...node, selected: chosen.has(node.id) })));
    setEdges((current) => current.map((edge) => (edge.selected ? { ...edge, selected: false } : edge)));
  }, []);

  const selectAll = useCallback(() => {
    setNodes((current) => current.map((node) => ({ ...node, selected: true })));
  }, []);

  // --- clipboard -------------------------------------------------------------------------------
  const clipboard = useRef<ClipboardContent | null>(null);
  const pasteCount = useRef(0);

  const copy = useCallback((): number => {
    const content = copySelection(nodes, edges);
    if (!content) return 0;
    clipboard.current = content;
    pasteCount.current = 0;
    return content.nodes.length;
  }, [nodes, edges]);

  const paste = useCallback((): number => {
    const content = clipboard.current;
    if (!content) return 0;
    pasteCount.current += 1;
    const step = 40 * pasteCount.current;
    const pasted = pasteClipboard(content, new Set(nodes.map((node) => node.id)), { x: step, y: step });
    setNodes((current) => [
      ...current.map((node) => (node.selected ? { ...node, selected: false } : node)),
      ...pasted.nodes.map((node) => ({
        ...makeNode(node.id, node.kind, node.params, node.position, catalog, node.label),
        selected: true,
      })),
    ]);
    setEdges((current) => [
      ...current,
      ...pasted.edges.map((edge): EditorEdge => ({ id: `e-${edge.source}-${edge.target}`, type: 'shape', ...edge })),
    ]);
    return pasted.nodes.length;
  }, [nodes, catalog]);

  return {
    nodes,
    edges,
    meta,
    graph,
    setMeta,
    setNodes,
    onNodesChange,
    onEdgesChange,
    onConnect,
    addNode,
    insertIntoEdgeUnder,
    prepareTable,
    updateParam,
    updateSearch,
    setNodeLabel,
    loadGraph,
    autoLayout,
    selectOnly,
    selectAll,
    copy,
    paste,
    undo: undoStep,
    redo: redoStep,
    canUndo: flags.canUndo,
    canRedo: flags.canRedo,
  };
}

export type EditorApi = ReturnType<typeof useEditor>;
