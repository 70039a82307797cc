// The editor page: toolbar, palette, canvas, problems and properties around one open graph, whose
// single source of truth is useEditor (the dialogs, the Train flow and other pages change it
// through its update path, so the canvas always shows what is saved and trained).
import { ReactFlowProvider, useReactFlow } from '@xyflow/react';
import { useCallback, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConfirm } from '../../ui/ConfirmDialog';
import { useFlowAriaLabels, useNamedEdges, useTitleLookup } from '../../i18n/flow';
import { useNotify } from '../../ui/toast';
import type { CatalogIndex } from '../catalog/catalogIndex';
import { useCatalog } from '../catalog/CatalogProvider';
import { EditorCanvas, FIT_VIEW_OPTIONS } from './EditorCanvas';
import { createEditorViewStore, EditorViewContext, type EditorView } from './EditorContext';
import { EditorDialogs, type Dialog } from './EditorDialogs';
import { nodeTitle } from './logic/connection';
import type { LayoutView } from './logic/layout';
import { searchedCount } from './logic/search';
import { preparationFor, stepList, type Preparation } from './logic/tablePrep';
import type { EditorEdge, EditorNode } from './logic/types';
import { Palette } from './panels/Palette';
import { ProblemsPanel } from './panels/ProblemsPanel';
import { PropertyPanel } from './panels/PropertyPanel';
import { Toolbar } from './panels/Toolbar';
import { loadDraft } from './storage';
import { useAddNode } from './useAddNode';
import { useEditor } from './useEditor';
import { EMPTY_GRAPH, useGraphDocument } from './useGraphDocument';
import { useServerGraph } from './useServerGraph';
import { useShortcuts } from './useShortcuts';
import { useSweep, sweepObjectives } from './useSweep';
import { useTrain } from './useTrain';
import { groupErrors, useValidation } from './useValidation';

function Editor({ catalog }: { catalog: CatalogIndex }) {
  const { t, i18n } = useTranslation();
  const notify = useNotify();
  const flow = useReactFlow<EditorNode, EditorEdge>();
  const [initial] = useState(() => loadDraft() ?? EMPTY_GRAPH);
  const [fitOnInit] = useState(() => initial.nodes.length > 0);
  const editor = useEditor(catalog, initial);
  const { nodes, selectOnly } = editor;
  const liveValidation = useValidation(editor.graph);
  const server = useServerGraph(editor.graph);
  const [dialog, setDialog] = useState<Dialog>(null);
  const closeDialog = useCallback(() => setDialog(null), []);
  const setTrainDialog = useCallback((open: boolean) => setDialog(open ? 'train' : null), []);
  const [problemsOpen, setProblemsOpen] = useState(true);
  const openProblems = useCallback(() => setProblemsOpen(true), []);
  const { confirm, choose, dialog: question } = useConfirm();
  const wrapper = useRef<HTMLDivElement>(null);
  const fileInput = useRef<HTMLInputElement>(null);

  const fit = useCallback(() => void flow.fitView({ ...FIT_VIEW_OPTIONS, duration: 200 }), [flow]);
  const fitSoon = useCallback(() => window.requestAnimationFrame(() => window.requestAnimationFrame(fit)), [fit]);
  const viewShape = useCallback((): LayoutView | undefined => {
    const box = wrapper.current?.getBoundingClientRect();
    return box && box.height > 0 ? { aspect: box.width / box.height, viewHeight: box.height } : undefined;
  }, []);
  const { autoLayout } = editor;
  const layout = useCallback(() => {
    autoLayout(viewShape());
    fitSoon();
  }, [autoLayout, viewShape, fitSoon]);
  // Two frames: React Flow measures new nodes after the frame that draws them.
  const layoutSoon = useCallback(
    (step: string) =>
      window.requestAnimationFrame(() =>
        window.requestAnimationFrame(() => {
          autoLayout(viewShape(), step);
          fitSoon();
        }),
      ),
    [autoLayout, viewShape, fitSoon],
  );
  const focusNode = useCallback(
    (nodeId: string) => {
      selectOnly([nodeId]);
      void flow.fitView({ nodes: [{ id: nodeId }], duration: 250, maxZoom: 1.2, padding: 0.6 });
    },
    [selectOnly, flow],
  );

  const doc = useGraphDocument({ editor, server, catalog, confirm, choose, fitSoon, viewShape, layoutSoon });
  const adding = useAddNode(editor, wrapper);
  const trainer = useTrain({
    editor,
    server,
    catalog,
    liveValidation,
    focusNode,
    openProblems,
    dialogOpen: dialog !== null,
    setTrainDialog,
  });
  const { validation } = trainer;
  const startSweep = useSweep(editor.graph, server, closeDialog);
  const objectives = useMemo(() => sweepObjectives(editor.graph, catalog), [editor.graph, catalog]);
  const searched = searchedCount(editor.graph.search);

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
  const kindOf = useCallback((nodeId: string) => nodes.find((n) => n.id === nodeId)?.data.kind ?? null, [nodes]);
  // One title lookup for the edges' names and the problems list; it changes only when a title does.
  const titleOf = useTitleLookup(nodes, (node) => nodeTitle(node, catalog));
  const namedEdges = useNamedEdges(editor.edges, titleOf);
  const flowLabels = useFlowAriaLabels();

  // The preparation a table needs, keyed by its JSON so it stays the same object while nodes move.
  const preparationKey = JSON.stringify(
    preparationFor(errors, nodes, editor.edges, catalog, validation.result?.dataset),
  );
  const { prepareTable } = editor;
  const preparation = useMemo(() => {
    const wanted = JSON.parse(preparationKey) as Preparation | null;
    if (!wanted) return null;
    const steps = stepList(
      wanted.types.map((type) => catalog.byType.get(type)?.title ?? type),
      i18n.language,
    );
    const onApply = () => {
      const step = `prepare-${Date.now()}`;
      const added = prepareTable(wanted, step);
      if (!added.length) return;
      layoutSoon(step);
      notify({
        kind: 'info',
        message: t('problems.prepared', { count: added.length, node: titleOf(wanted.nodeId) }),
      });
    };
    return { steps, onApply };
  }, [preparationKey, catalog, prepareTable, layoutSoon, notify, t, i18n.language, titleOf]);

  const save = () => {
    if (!server.saving) doc.save().catch(() => undefined);
  };
  useShortcuts(
    {
      save,
      train: () => void trainer.train(),
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
    dialog === null && question === null,
  );

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
          onNew={() => void doc.newGraph()}
          onOpen={() => setDialog('open')}
          onSave={save}
          onSaveAs={() => {
            if (!server.saving) doc.saveAs().catch(() => undefined);
          }}
          onVersions={() => setDialog('versions')}
          onImport={() => fileInput.current?.click()}
          onExport={doc.exportGraph}
          onTemplates={() => setDialog('templates')}
          onUndo={editor.undo}
          onRedo={editor.redo}
          onLayout={layout}
          onFit={fit}
          onCode={() => setDialog({ code: editor.graph })}
          onShortcuts={() => setDialog('shortcuts')}
          onTrain={() => void trainer.train()}
          training={trainer.training}
          onSweep={searched > 0 ? () => setDialog('sweep') : undefined}
        />
        <input
          ref={fileInput}
          type="file"
          accept="application/json,.json"
          hidden
          onChange={(e) => void doc.importFile(e)}
        />
        <div className="editor__body">
          <Palette catalog={catalog} onAdd={adding.addAtCentre} />
          <div className="editor__center">
            <EditorCanvas
              editor={editor}
              displayEdges={namedEdges}
              ariaLabelConfig={flowLabels}
              catalog={catalog}
              wrapper={wrapper}
              fitOnInit={fitOnInit}
              onDragOver={adding.onDragOver}
              onDrop={adding.onDrop}
              onTemplates={() => setDialog('templates')}
            />
            <ProblemsPanel
              errors={errors}
              titleOf={titleOf}
              kindOf={kindOf}
              onFocusNode={focusNode}
              stale={validation.status === 'pending'}
              open={problemsOpen}
              onToggle={() => setProblemsOpen((open) => !open)}
              preparation={preparation}
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
            onSearchChange={editor.updateSearch}
          />
        </div>
      </div>
      <EditorDialogs
        dialog={dialog}
        onClose={closeDialog}
        graph={editor.graph}
        link={server.link}
        trainNode={trainer.trainNode}
        trainSchema={trainer.schema}
        dataset={validation.result?.dataset ?? null}
        onTemplate={doc.openTemplate}
        onOpenSaved={doc.openSaved}
        onTrain={trainer.start}
        objectives={objectives}
        onSweep={startSweep}
      />
      {question}
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
