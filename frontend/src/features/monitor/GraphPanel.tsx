import { Background, Controls, ReactFlow, ReactFlowProvider } from '@xyflow/react';
import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { validateGraph } from '../../api/endpoints';
import type { GraphSpec } from '../../api/types';
import { useCatalog } from '../catalog/CatalogProvider';
import { edgeTypes } from '../editor/edges/ShapeEdgeView';
import { createEditorViewStore, EditorViewContext, type EditorView } from '../editor/EditorContext';
import { graphToFlow } from '../editor/logic/convert';
import { nodeTypes } from '../editor/nodes/nodeTypes';

const NO_ERRORS = new Map();

/** The task's graph snapshot, drawn with the editor's own node cards, read-only. */
export function GraphPanel({ graph }: { graph: GraphSpec }) {
  const { t } = useTranslation();
  const catalog = useCatalog();
  const [shapes, setShapes] = useState<Record<string, string>>({});

  useEffect(() => {
    // Only for the shape labels on the edges; a graph that no longer validates still draws.
    const controller = new AbortController();
    validateGraph(graph, controller.signal)
      .then((result) => setShapes(result.shapes))
      .catch(() => undefined);
    return () => controller.abort();
  }, [graph]);

  const flow = useMemo(() => graphToFlow(graph, catalog.index), [graph, catalog.index]);
  const view = useMemo<EditorView>(
    () => ({ catalog: catalog.index, errorsByNode: NO_ERRORS, shapes }),
    [catalog.index, shapes],
  );
  // The editor's node cards read the catalog and shapes from a small store (EditorContext.ts).
  const [store] = useState(() => createEditorViewStore(view));
  useEffect(() => store.set(view), [store, view]);

  return (
    <div className="graph-view" aria-label={t('monitor.graphLabel', { count: graph.nodes.length })} role="region">
      <EditorViewContext.Provider value={store}>
        <ReactFlowProvider>
          <ReactFlow
            nodes={flow.nodes}
            edges={flow.edges}
            nodeTypes={nodeTypes}
            edgeTypes={edgeTypes}
            nodesDraggable={false}
            nodesConnectable={false}
            elementsSelectable={false}
            deleteKeyCode={null}
            fitView
            fitViewOptions={{ padding: 0.15 }}
            minZoom={0.2}
            proOptions={{ hideAttribution: true }}
          >
            <Background gap={20} size={1} color="#e3e6ee" />
            <Controls showInteractive={false} />
          </ReactFlow>
        </ReactFlowProvider>
      </EditorViewContext.Provider>
    </div>
  );
}

function display(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (Array.isArray(value)) return value.map(display).join(', ');
  if (typeof value === 'object') {
    return Object.entries(value)
      .map(([key, item]) => `${key} ${display(item)}`)
      .join(' · ');
  }
  return String(value);
}

/** The train node's settings as run (defaults filled in) and the task's resources. */
export function ConfigPanel({ config, extra }: { config: Record<string, unknown>; extra: Record<string, unknown> }) {
  const { t } = useTranslation();
  return (
    <div className="config">
      <div className="chart-card">
        <h3>{t('monitor.trainSettings')}</h3>
        <dl className="facts">
          {Object.entries(config).map(([key, value]) => (
            <div key={key}>
              <dt>{key}</dt>
              <dd>{display(value)}</dd>
            </div>
          ))}
        </dl>
      </div>
      <div className="chart-card">
        <h3>{t('monitor.taskSettings')}</h3>
        <dl className="facts">
          {Object.entries(extra).map(([key, value]) => (
            <div key={key}>
              <dt>{t(`monitor.fact.${key}`, { defaultValue: key })}</dt>
              <dd>{display(value)}</dd>
            </div>
          ))}
        </dl>
      </div>
    </div>
  );
}
