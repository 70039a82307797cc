import {
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  type Connection,
  type Edge,
  type FinalConnectionState,
} from '@xyflow/react';
import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type ChangeEvent,
  type DragEvent,
} from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, validateGraph, type SavedGraph } from '../../api/endpoints';
import type { GraphError, GraphSpec } from '../../api/types';
import { navigate } from '../../app/router';
import { pathFor } from '../../app/routes';
import { useNotify } from '../../ui/toast';
import { submitTask } from '../tasks/api';
import type { CatalogIndex } from '../catalog/catalogIndex';
import { useCatalog } from '../catalog/CatalogProvider';
import { ConnectionHint, connectionBetween, useRefusalText } from './ConnectionHint';
import { CodeDialog } from './dialogs/CodeDialog';
import { OpenDialog } from './dialogs/OpenDialog';
import { ShortcutsDialog } from './dialogs/ShortcutsDialog';
import { TemplatesDialog } from './dialogs/TemplatesDialog';
import { TrainDialog, type TrainStep } from './dialogs/TrainDialog';
import { VersionsDialog } from './dialogs/VersionsDialog';
import { edgeTypes } from './edges/ShapeEdgeView';
import { createEditorViewStore, EditorViewContext, type EditorView } from './EditorContext';
import { checkConnection, nodeTitle } from './logic/connection';
import { flowToGraph, graphToFlow, parseGraphJson, validationKey } from './logic/convert';
import { findFreeSpot } from './logic/placement';
import {
  epochsOf,
  epochsRange,
  firstFailingNode,
  graphProblemsOf,
  mergeErrors,
  trainNodeOf,
  withEpochs,
} from './logic/train';
import type { EditorEdge, EditorNode } from './logic/types';
import { nodeTypes } from './nodes/nodeTypes';
import { DRAG_MIME, Palette } from './panels/Palette';
import { ProblemsPanel } from './panels/ProblemsPanel';
import { PropertyPanel } from './panels/PropertyPanel';
import { Toolbar } from './panels/Toolbar';
import { downloadJson, fileNameFor, loadDraft, takeFocusRequest } from './storage';
import { useEditor } from './useEditor';
import { useShortcuts } from './useShortcuts';
import { graphKey, useServerGraph } from './useServerGraph';
import { groupErrors, useValidation, type ValidationState } from './useValidation';

const EMPTY_GRAPH: GraphSpec = { version: 1, name: 'Untitled', description: '', nodes: [], edges: [] };
/** Where a dropped node's top-left lands relative to the pointer: the pointer holds its header. */
const DROP_OFFSET = { x: 90, y: 17 };
/** A typical node's size, for placing one before it is measured. */
const NODE_SIZE = { width: 180, height: 110 };
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
const FIT_VIEW_OPTIONS = { padding: 0.15, maxZoom: 1.2 };

type Dialog = null | 'templates' | 'shortcuts' | 'open' | 'versions' | 'train' | { code: GraphSpec };

/** Problems the server found when Train checked or submitted the graph, while it is unchanged. */
interface TrainProblems {
  key: string;
  errors: GraphError[];
}

function Editor({ catalog }: { catalog: CatalogIndex }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const refusal = useRefusalText();
  const flow = useReactFlow<EditorNode, EditorEdge>();
  const [initial] = useState(() => loadDraft() ?? EMPTY_GRAPH);
  // Fit the first graph in view; an empty canvas keeps zoom 1, so the first drop does not jump.
  const [fitOnInit] = useState(() => initial.nodes.length > 0);
  const editor = useEditor(catalog, initial);
  const { nodes, edges } = editor;
  const liveValidation = useValidation(editor.graph);
  const server = useServerGraph(editor.graph);
  const [dialog, setDialog] = useState<Dialog>(null);
  const [problemsOpen, setProblemsOpen] = useState(true);
  const [training, setTraining] = useState<'checking' | 'starting' | null>(null);
  const [trainProblems, setTrainProblems] = useState<TrainProblems | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);

  // Latest nodes/edges for callbacks React Flow keeps (isValidConnection runs on every move).
  const latest = useRef({ nodes, edges, graph: editor.graph });
  latest.current = { nodes, edges, graph: editor.graph };

  // What Train heard from the server is shown like live validation (badges, fields, Problems)
  // until the graph changes; then live validation alone speaks again.
  const graphKeyNow = useMemo(() => validationKey(editor.graph), [editor.graph]);
  const extraErrors = trainProblems && trainProblems.key === graphKeyNow ? trainProblems.errors : null;
  const validation = useMemo<ValidationState>(() => {
    if (!extraErrors) return liveValidation;
    const result = liveValidation.result ?? { ok: false, errors: [], shapes: {}, dataset: null, model_inputs: {} };
    const errors = mergeErrors(result.errors, extraErrors);
    const status = liveValidation.status === 'empty' ? 'done' : liveValidation.status;
    return { ...liveValidation, status, result: { ...result, ok: errors.length === 0, errors } };
  }, [liveValidation, extraErrors]);

  // `nodes` is a new array on every drag frame and keystroke; the set of ids changes only when
  // nodes come or go. Keyed on the ids, errorsByNode and the view stay the same objects meanwhile,
  // so nothing that reads them re-renders per frame.
  const idsKey = useMemo(() => JSON.stringify(nodes.map((node) => node.id)), [nodes]);
  const nodeIds = useMemo(() => new Set<string>(JSON.parse(idsKey) as string[]), [idsKey]);
  const errors = useMemo(() => validation.result?.errors ?? [], [validation.result]);
  const errorsByNode = useMemo(() => groupErrors(errors, nodeIds), [errors, nodeIds]);
  const view = useMemo<EditorView>(
    () => ({ catalog, errorsByNode, shapes: validation.result?.shapes ?? {} }),
    [catalog, errorsByNode, validation.result],
  );
  const [viewStore] = useState(() => createEditorViewStore(view));
  useLayoutEffect(() => viewStore.set(view), [viewStore, view]);
  const selected = useMemo(() => nodes.filter((node) => node.selected), [nodes]);

  // --- connections -----------------------------------------------------------------------------
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

  // --- adding nodes ----------------------------------------------------------------------------
  const onDragOver = useCallback((event: DragEvent) => {
    if (!event.dataTransfer.types.includes(DRAG_MIME)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
  }, []);
  const { addNode } = editor;
  const onDrop = useCallback(
    (event: DragEvent) => {
      const kind = event.dataTransfer.getData(DRAG_MIME);
      if (!kind) return;
      event.preventDefault();
      const point = flow.screenToFlowPosition({ x: event.clientX, y: event.clientY });
      addNode(kind, { x: point.x - DROP_OFFSET.x, y: point.y - DROP_OFFSET.y });
    },
    [flow, addNode],
  );
  const wrapper = useRef<HTMLDivElement>(null);
  const addAtCentre = useCallback(
    (kind: string) => {
      const box = wrapper.current?.getBoundingClientRect();
      const centre = box ? { x: box.left + box.width / 2, y: box.top + box.height / 2 } : { x: 400, y: 300 };
      const point = flow.screenToFlowPosition(centre);
      const taken = latest.current.nodes.map((node) => ({
        ...node.position,
        width: node.measured?.width ?? NODE_SIZE.width,
        height: node.measured?.height ?? NODE_SIZE.height,
      }));
      const wanted = { x: point.x - NODE_SIZE.width / 2, y: point.y - NODE_SIZE.height / 2 };
      addNode(kind, findFreeSpot(wanted, NODE_SIZE, taken));
    },
    // Not `nodes`: a new callback per drag frame would re-render the palette (it is memoised).
    [flow, addNode],
  );

  // --- toolbar actions -------------------------------------------------------------------------
  const fit = useCallback(() => void flow.fitView({ padding: 0.15, duration: 200, maxZoom: 1.2 }), [flow]);
  const fitSoon = useCallback(() => window.requestAnimationFrame(() => window.requestAnimationFrame(fit)), [fit]);
  const layout = useCallback(() => {
    const box = wrapper.current?.getBoundingClientRect();
    editor.autoLayout(box && box.height > 0 ? box.width / box.height : undefined);
    fitSoon();
  }, [editor, fitSoon]);
  /** Show a graph that is not (yet) saved on the server: a new one, an import, a template. */
  const load = useCallback(
    (graph: GraphSpec) => {
      editor.loadGraph(graph);
      server.detach();
      fitSoon();
    },
    [editor, server, fitSoon],
  );
  /** Show a graph saved on the server; saving again makes its next version. */
  const openSaved = useCallback(
    (saved: SavedGraph) => {
      const graph = { ...saved.graph, name: saved.name };
      const flow = graphToFlow(graph, catalog);
      editor.loadGraph(graph);
      server.adopt(saved, graphKey(flowToGraph(flow.nodes, flow.edges, flow.meta)));
      fitSoon();
    },
    [catalog, editor, server, fitSoon],
  );
  const save = useCallback(async () => {
    try {
      const link = await server.save();
      notify({ kind: 'success', message: t('toolbar.savedToast', { name: link.name, version: link.version }) });
      return link;
    } catch (error) {
      notify({ kind: 'error', message: t('toolbar.saveFailed', { message: (error as Error).message }) });
      throw error;
    }
  }, [server, notify, t]);
  const ensureSaved = useCallback(async () => {
    if (server.link && !server.dirty) return server.link.id;
    return (await server.save()).id;
  }, [server]);
  const onNew = useCallback(() => {
    if (nodes.length && !window.confirm(t('toolbar.newConfirm'))) return;
    load({ ...EMPTY_GRAPH });
  }, [nodes.length, load, t]);
  const onExport = useCallback(
    () => downloadJson(fileNameFor(editor.meta.name), editor.graph),
    [editor.meta.name, editor.graph],
  );
  const onImportFile = useCallback(
    async (event: ChangeEvent<HTMLInputElement>) => {
      const file = event.target.files?.[0];
      event.target.value = '';
      if (!file) return;
      const parsed = parseGraphJson(await file.text());
      if (!parsed.ok) {
        const reason = t(`io.${parsed.reason}`, { version: parsed.version });
        notify({ kind: 'error', message: t('io.importFailed', { message: reason }) });
        return;
      }
      load(parsed.graph);
      notify({ kind: 'success', message: t('io.imported', { name: parsed.graph.name }) });
    },
    [load, notify, t],
  );
  const focusNode = useCallback(
    (nodeId: string) => {
      editor.selectOnly([nodeId]);
      void flow.fitView({ nodes: [{ id: nodeId }], duration: 250, maxZoom: 1.2, padding: 0.6 });
    },
    [editor, flow],
  );
  // Another page put a node in the draft (Datasets' "Use in editor"): select it, so its properties show.
  const { selectOnly } = editor;
  useEffect(() => {
    const nodeId = takeFocusRequest();
    if (nodeId && latest.current.nodes.some((node) => node.id === nodeId)) selectOnly([nodeId]);
  }, [selectOnly]);
  const titleOf = useCallback(
    (nodeId: string) => {
      const node = nodes.find((n) => n.id === nodeId);
      return node ? nodeTitle(node, catalog) : null;
    },
    [nodes, catalog],
  );

  // --- train ---------------------------------------------------------------------------------------
  /** Problems found by Train: keep them on the nodes, open the list and show the first node. */
  const showTrainProblems = useCallback(
    (errors: GraphError[], key: string, title: string) => {
      setTrainProblems({ key, errors });
      setProblemsOpen(true);
      const first = firstFailingNode(errors, new Set(latest.current.nodes.map((node) => node.id)));
      if (first) focusNode(first);
      notify({ kind: 'error', title, message: t('train.invalid', { count: errors.length }) });
    },
    [focusNode, notify, t],
  );
  /** Train: check the graph now (live validation may be behind), then the dialog. */
  const train = useCallback(async () => {
    if (training || dialog) return;
    const graph = latest.current.graph;
    if (!graph.nodes.length) {
      notify({ kind: 'info', title: t('train.notReady'), message: t('train.empty') });
      return;
    }
    setTraining('checking');
    try {
      const result = await validateGraph(graph);
      if (result.errors.length) showTrainProblems(result.errors, validationKey(graph), t('train.notReady'));
      else setDialog('train');
    } catch (error) {
      notify({ kind: 'error', message: t('train.checkFailed', { message: (error as Error).message }) });
    } finally {
      setTraining(null);
    }
  }, [training, dialog, notify, t, showTrainProblems]);
  const trainSchema = useMemo(() => {
    const node = trainNodeOf(editor.graph);
    return node ? catalog.byType.get(node.type)?.params_schema : undefined;
  }, [catalog, editor.graph]);
  /** From the dialog: the epochs go into the train node, the graph is saved, the task queued. */
  const startTraining = useCallback(
    async (options: { name: string; epochs: number | null }, onStep: (step: TrainStep) => void) => {
      const current = latest.current.graph;
      const graph = options.epochs === null ? current : withEpochs(current, options.epochs);
      const trainNode = trainNodeOf(graph);
      if (graph !== current && trainNode) editor.updateParam(trainNode.id, 'epochs', options.epochs ?? undefined);
      setTraining('starting');
      try {
        let source: { graph_id: string } | { graph: GraphSpec };
        try {
          const link = server.link && !server.dirty && graph === current ? server.link : await server.save(graph);
          source = { graph_id: link.id };
        } catch (error) {
          // Saving is not possible (storage full, no rights): train the graph as it is all the same.
          notify({ kind: 'info', message: t('train.unsaved', { message: (error as Error).message }) });
          source = { graph };
        }
        onStep('submitting');
        let task;
        try {
          task = await submitTask(source, options.name);
        } catch (error) {
          const problems = error instanceof ApiError && error.status === 422 ? graphProblemsOf(error.body) : null;
          if (!problems?.length) throw error;
          setDialog(null);
          showTrainProblems(problems, validationKey(graph), t('train.refused'));
          return;
        }
        notify({ kind: 'success', message: t('train.started', { name: task.name }) });
        setDialog(null);
        navigate(pathFor('tasks', task.id));
      } finally {
        setTraining(null);
      }
    },
    [editor, server, notify, t, showTrainProblems],
  );

  useShortcuts(
    {
      save: () => {
        if (!server.saving) save().catch(() => undefined);
      },
      train: () => void train(),
      undo: editor.undo,
      redo: editor.redo,
      copy: () => {
        const count = editor.copy();
        if (count) notify({ kind: 'info', message: t('clipboard.copied', { count }) });
      },
      paste: editor.paste,
      selectAll: editor.selectAll,
      help: () => setDialog('shortcuts'),
      layout,
      fit,
    },
    dialog === null,
  );

  const stale = validation.status === 'pending';
  const toggleProblems = () => setProblemsOpen((open) => !open);
  return (
    <EditorViewContext.Provider value={viewStore}>
      <div className="editor">
        <Toolbar
          name={editor.meta.name}
          onNameChange={(name) => editor.setMeta({ ...editor.meta, name })}
          validation={validation}
          canUndo={editor.canUndo}
          canRedo={editor.canRedo}
          savedVersion={server.link?.version ?? null}
          dirty={server.dirty}
          saving={server.saving}
          onNew={onNew}
          onOpen={() => setDialog('open')}
          onSave={() => void save().catch(() => undefined)}
          onVersions={() => setDialog('versions')}
          onImport={() => fileInput.current?.click()}
          onExport={onExport}
          onTemplates={() => setDialog('templates')}
          onUndo={editor.undo}
          onRedo={editor.redo}
          onLayout={layout}
          onFit={fit}
          onCode={() => setDialog({ code: editor.graph })}
          onShortcuts={() => setDialog('shortcuts')}
          onTrain={() => void train()}
          training={training}
        />
        <input
          ref={fileInput}
          type="file"
          accept="application/json,.json"
          hidden
          onChange={(e) => void onImportFile(e)}
        />
        <div className="editor__body">
          <Palette catalog={catalog} onAdd={addAtCentre} />
          <div className="editor__center">
            <div className="canvas" ref={wrapper} onDragOver={onDragOver} onDrop={onDrop}>
              <ReactFlow<EditorNode, EditorEdge>
                nodes={nodes}
                edges={edges}
                nodeTypes={nodeTypes}
                edgeTypes={edgeTypes}
                onNodesChange={editor.onNodesChange}
                onEdgesChange={editor.onEdgesChange}
                onConnect={editor.onConnect}
                onConnectEnd={onConnectEnd}
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
                {nodes.length > 0 && (
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
                  <button type="button" className="btn btn--primary" onClick={() => setDialog('templates')}>
                    {t('canvas.openTemplates')}
                  </button>
                </div>
              )}
            </div>
            <ProblemsPanel
              errors={errors}
              titleOf={titleOf}
              onFocusNode={focusNode}
              stale={stale}
              open={problemsOpen}
              onToggle={toggleProblems}
            />
          </div>
          <PropertyPanel
            catalog={catalog}
            selected={selected}
            errorsByNode={errorsByNode}
            validation={validation.result}
            meta={editor.meta}
            onMetaChange={editor.setMeta}
            onParamChange={editor.updateParam}
            onLabelChange={editor.setNodeLabel}
          />
        </div>
      </div>
      {dialog === 'shortcuts' && <ShortcutsDialog onClose={() => setDialog(null)} />}
      {dialog === 'templates' && (
        <TemplatesDialog
          onClose={() => setDialog(null)}
          onOpen={(graph) => {
            setDialog(null);
            load(graph);
          }}
        />
      )}
      {dialog === 'open' && (
        <OpenDialog
          onClose={() => setDialog(null)}
          onOpen={(saved) => {
            setDialog(null);
            openSaved(saved);
          }}
        />
      )}
      {dialog === 'versions' && (
        <VersionsDialog
          link={server.link}
          name={editor.meta.name}
          onClose={() => setDialog(null)}
          onRestored={(saved) => {
            setDialog(null);
            openSaved(saved);
          }}
        />
      )}
      {dialog === 'train' && (
        <TrainDialog
          name={editor.meta.name}
          epochs={epochsOf(editor.graph, trainSchema)}
          range={epochsRange(trainSchema)}
          nodeCount={nodes.length}
          dataset={validation.result?.dataset ?? null}
          onSubmit={startTraining}
          onClose={() => setDialog(null)}
        />
      )}
      {dialog && typeof dialog === 'object' && (
        <CodeDialog graph={dialog.code} ensureSaved={ensureSaved} onClose={() => setDialog(null)} />
      )}
    </EditorViewContext.Provider>
  );
}

export default function EditorPage() {
  const { t } = useTranslation();
  const { index, status, error, reload } = useCatalog();
  if (status === 'loading') {
    return <div className="editor-state">{t('palette.loading')}</div>;
  }
  if (status === 'error') {
    return (
      <div className="editor-state editor-state--error" role="alert">
        <p>{t('palette.failed', { message: error })}</p>
        <button type="button" className="btn btn--primary" onClick={reload}>
          {t('palette.retry')}
        </button>
      </div>
    );
  }
  return (
    <ReactFlowProvider>
      <Editor catalog={index} />
    </ReactFlowProvider>
  );
}
