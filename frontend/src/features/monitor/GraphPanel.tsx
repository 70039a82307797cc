import { Background, Controls, ReactFlow, ReactFlowProvider } from '@xyflow/react';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { validateGraph } from '../../api/graphs';
import type { GraphSpec, JsonObject, JsonValue } from '../../api/types';
import { useCatalog } from '../catalog/CatalogProvider';
import { trainNodeOf } from '../catalog/taskKind';
import { edgeTypes } from '../editor/edges/ShapeEdgeView';
import { createEditorViewStore, EditorViewContext, type EditorView } from '../editor/EditorContext';
import { graphToFlow } from '../editor/logic/convert';
import { nodeTitle } from '../editor/logic/connection';
import { fieldApplies, fieldsFromSchema, optionLabel } from '../editor/logic/schemaForm';
import { nodeTypes } from '../editor/nodes/nodeTypes';
import { useFlowAriaLabels, useNamedEdges } from '../../i18n/flow';

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
  const titleOf = useCallback(
    (nodeId: string) => {
      const node = flow.nodes.find((n) => n.id === nodeId);
      return node ? nodeTitle(node, catalog.index) : null;
    },
    [flow.nodes, catalog.index],
  );
  const edges = useNamedEdges(flow.edges, titleOf);
  const flowLabels = useFlowAriaLabels();
  // The editor's node cards read the catalog and shapes from a small store (EditorContext.ts).
  const [store] = useState(() => createEditorViewStore(view));
  useEffect(() => store.set(view), [store, view]);

  return (
    <div className="graph-view" aria-label={t('monitor.graphLabel', { count: graph.nodes.length })} role="region">
      <EditorViewContext.Provider value={store}>
        <ReactFlowProvider>
          <ReactFlow
            nodes={flow.nodes}
            edges={edges}
            ariaLabelConfig={flowLabels}
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
/** Facts that are identifiers, shown as they are (and left alone by translators). */
const IDENTIFIERS = new Set(['id', 'graph_id']);

export function ConfigPanel({
  config,
  extra,
  graph,
  decided = {},
}: {
  config: Record<string, unknown>;
  extra: Record<string, unknown>;
  graph: Pick<GraphSpec, 'nodes'>;
  /** What the run decided for settings left on "auto" (the fast path's precision and layout). */
  decided?: Record<string, string>;
}) {
  const { t } = useTranslation();
  const catalog = useCatalog();
  // The run's own train node's form describes its settings (a Regressor's loss and target scaling
  // are not a Classifier's): titles, choice labels, what applies.
  const trainNode = trainNodeOf(graph, catalog.index);
  const schema = trainNode ? catalog.index.byType.get(trainNode.type)?.params_schema : undefined;
  const fields = useMemo(() => (schema ? fieldsFromSchema(schema) : []), [schema]);
  const params = config as JsonObject;
  const setting = (key: string, value: unknown) => {
    const field = fields.find((candidate) => candidate.name === key);
    if (!field) return { title: key, value: display(value), applies: true };
    const shown =
      typeof value === 'boolean'
        ? t(value ? 'props.on' : 'props.off')
        : field.options
          ? optionLabel(field, value as JsonValue)
          : display(value);
    const outcome = value === 'auto' ? decided[key] : undefined;
    return {
      title: field.title,
      value: outcome ? `${shown} → ${outcome}` : shown,
      applies: fieldApplies(field, fields, params),
    };
  };
  const fact = (key: string, value: unknown) =>
    key === 'resources' && value && typeof value === 'object'
      ? Object.entries(value)
          .map(([name, amount]) => `${t(`monitor.resource.${name}`, { defaultValue: name })} ${display(amount)}`)
          .join(' · ')
      : display(value);
  return (
    <div className="config">
      <div className="chart-card">
        <h3>{t('monitor.trainSettings')}</h3>
        <dl className="facts">
          {Object.entries(config)
            .map(([key, value]) => [key, setting(key, value)] as const)
            .filter(([, shown]) => shown.applies)
            .map(([key, shown]) => (
              <div key={key} data-setting={key}>
                <dt>{shown.title}</dt>
                <dd>{shown.value}</dd>
              </div>
            ))}
        </dl>
      </div>
      <div className="chart-card">
        <h3>{t('monitor.taskSettings')}</h3>
        <dl className="facts">
          {Object.entries(extra).map(([key, value]) => (
            <div key={key} data-fact={key}>
              <dt>{t(`monitor.fact.${key}`, { defaultValue: key })}</dt>
              <dd translate={IDENTIFIERS.has(key) ? 'no' : undefined}>{fact(key, value)}</dd>
            </div>
          ))}
        </dl>
      </div>
    </div>
  );
}
