// The canvas: React Flow with the editor's nodes and edges, connection rules, drops from the
// palette, the minimap, and the empty state.
import {
  Background,
  Controls,
  getNodesBounds,
  MiniMap,
  ReactFlow,
  useStore,
  type AriaLabelConfig,
  type Connection,
  type Edge,
  type FinalConnectionState,
  type ReactFlowState,
} from '@xyflow/react';
import { useCallback, useLayoutEffect, useRef, type DragEvent, type RefObject } from 'react';
import { useTranslation } from 'react-i18next';
import { useNotify } from '../../ui/toast';
import type { CatalogIndex } from '../catalog/catalogIndex';
import { ConnectionHint, connectionBetween, useRefusalText } from './ConnectionHint';
import { edgeTypes } from './edges/ShapeEdgeView';
import { checkConnection } from './logic/connection';
import type { EditorEdge, EditorNode } from './logic/types';
import { nodeTypes } from './nodes/nodeTypes';
import type { EditorApi } from './useEditor';

const MINIMAP_COLORS: Record<string, string> = {
  dataset: '#16a34a',
  op: '#0891b2',
  layer: '#4f46e5',
  model: '#c026d3',
  train: '#ea580c',
  unknown: '#94a3b8',
};
// React Flow props at module scope: a new object or array on every render would be copied into
// its store each time (defaultEdgeOptions re-renders every edge) or re-bind its key listeners.
const minimapColor = (node: EditorNode) => MINIMAP_COLORS[node.type ?? 'unknown'] ?? '#94a3b8';
const MINIMAP_STYLE = { width: 160, height: 110 };
const DEFAULT_EDGE_OPTIONS = { type: 'shape' };
const DELETE_KEYS = ['Delete', 'Backspace'];
const MULTI_SELECTION_KEYS = ['Meta', 'Control'];
// A fitted graph stays clear of the zoom buttons in the bottom-left corner.
export const FIT_VIEW_OPTIONS = {
  padding: { top: '24px', right: '24px', bottom: '24px', left: '64px' },
  maxZoom: 1.2,
} as const;

/**
 * Whether some node is outside the view: only then is the minimap worth its corner (over a fitted
 * graph it would hide the nodes under it).
 */
function partlyHidden(state: ReactFlowState): boolean {
  if (!state.nodeLookup.size) return false;
  const bounds = getNodesBounds([...state.nodeLookup.values()], { nodeLookup: state.nodeLookup });
  const [x, y, zoom] = state.transform;
  return (
    bounds.x * zoom + x < 0 ||
    bounds.y * zoom + y < 0 ||
    (bounds.x + bounds.width) * zoom + x > state.width ||
    (bounds.y + bounds.height) * zoom + y > state.height
  );
}

interface Props {
  editor: EditorApi;
  /** The editor's edges as drawn: with names for screen readers. */
  displayEdges: EditorEdge[];
  ariaLabelConfig: Partial<AriaLabelConfig>;
  catalog: CatalogIndex;
  wrapper: RefObject<HTMLDivElement | null>;
  /** Fit the first graph in view; an empty canvas keeps zoom 1, so the first drop does not jump. */
  fitOnInit: boolean;
  onDragOver: (event: DragEvent) => void;
  onDrop: (event: DragEvent) => void;
  onTemplates: () => void;
}

export function EditorCanvas({
  editor,
  displayEdges,
  ariaLabelConfig,
  catalog,
  wrapper,
  fitOnInit,
  onDragOver,
  onDrop,
  onTemplates,
}: Props) {
  const { t } = useTranslation();
  const notify = useNotify();
  const refusal = useRefusalText();
  const { nodes, edges } = editor;
  const showMinimap = useStore(partlyHidden);
  // Latest nodes/edges for callbacks React Flow keeps (isValidConnection runs on every move).
  const latest = useRef({ nodes, edges });
  useLayoutEffect(() => {
    latest.current = { nodes, edges };
  }, [nodes, edges]);

  const isValidConnection = useCallback(
    (connection: EditorEdge | Connection | Edge) =>
      checkConnection(connection, latest.current.nodes, latest.current.edges, catalog).ok,
    [catalog],
  );
  const onConnectEnd = useCallback(
    (_event: MouseEvent | TouchEvent, state: FinalConnectionState) => {
      if (state.isValid !== false || !state.toHandle || !state.fromHandle) return;
      const verdict = checkConnection(
        connectionBetween(state.fromHandle, state.toHandle),
        latest.current.nodes,
        latest.current.edges,
        catalog,
      );
      const message = refusal(verdict);
      if (message) notify({ kind: 'error', title: t('connection.refused'), message });
    },
    [catalog, notify, refusal, t],
  );

  // A single node dragged onto an edge goes into it (a selection dragged together does not).
  const { insertIntoEdgeUnder } = editor;
  const onNodeDragStop = useCallback(
    (_event: unknown, node: EditorNode, dragged: EditorNode[]) => {
      if (dragged.length <= 1) insertIntoEdgeUnder(node);
    },
    [insertIntoEdgeUnder],
  );

  return (
    <div className="canvas" ref={wrapper} onDragOver={onDragOver} onDrop={onDrop}>
      <ReactFlow<EditorNode, EditorEdge>
        nodes={nodes}
        edges={displayEdges}
        ariaLabelConfig={ariaLabelConfig}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onNodesChange={editor.onNodesChange}
        onEdgesChange={editor.onEdgesChange}
        onConnect={editor.onConnect}
        onConnectEnd={onConnectEnd}
        onNodeDragStop={onNodeDragStop}
        isValidConnection={isValidConnection}
        defaultEdgeOptions={DEFAULT_EDGE_OPTIONS}
        deleteKeyCode={DELETE_KEYS}
        selectionKeyCode="Shift"
        multiSelectionKeyCode={MULTI_SELECTION_KEYS}
        fitView={fitOnInit}
        fitViewOptions={FIT_VIEW_OPTIONS}
        minZoom={0.15}
        maxZoom={2}
        aria-label={t('canvas.label')}
      >
        <Background gap={20} size={1.2} color="#cbd5e1" />
        <Controls showInteractive={false} />
        {showMinimap && (
          <MiniMap
            style={MINIMAP_STYLE}
            pannable
            zoomable
            nodeColor={minimapColor}
            nodeStrokeWidth={2}
            ariaLabel="Minimap"
          />
        )}
        <ConnectionHint nodes={nodes} edges={edges} catalog={catalog} />
      </ReactFlow>
      {nodes.length === 0 && (
        <div className="canvas__empty">
          <h2>{t('canvas.emptyTitle')}</h2>
          <p>{t('canvas.emptyBody')}</p>
          <button type="button" className="btn btn--primary" onClick={onTemplates}>
            {t('canvas.openTemplates')}
          </button>
        </div>
      )}
    </div>
  );
}
