// The open graph as a document: new, open, save, import, export, and the changes other pages ask
// for (Datasets' "Use in editor", a task's "Open in editor"). Every change goes through the editor's
// own update path, so it shows on the canvas and is one undoable step.
import { useCallback, useEffect, useLayoutEffect, useRef, type ChangeEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { SavedGraph } from '../../api/graphs';
import type { GraphSpec } from '../../api/types';
import type { TFunction } from 'i18next';
import { ApiError } from '../../api/graphs';
import type { Choose, Confirm, Question } from '../../ui/ConfirmDialog';
import { useNotify } from '../../ui/toast';
import type { CatalogIndex } from '../catalog/catalogIndex';
import { fitsGraph, nameForDataset, UPLOADED_TYPE, withUploadedDataset } from './logic/datasetNode';
import { tableGoesIntoGraph, tableStarterGraph } from './logic/tableStarter';
import { flowToGraph, graphToFlow, parseGraphJson } from './logic/convert';
import { sameName, saveKind } from './logic/saveKind';
import type { LayoutView } from './logic/layout';
import { downloadJson, fileNameFor, graphKey, takeEditRequest } from './storage';
import type { EditorApi } from './useEditor';
import type { ServerGraph } from './useServerGraph';
import { errorText } from '../../i18n/errorText';

export const EMPTY_GRAPH: GraphSpec = { version: 1, name: 'Untitled', description: '', nodes: [], edges: [] };

/** The question before a template, a saved graph or an import replaces unsaved work: its button
 * says what it does ("Replace"), whichever of them asked. */
export function replaceQuestion(t: TFunction): Question {
  return { title: t('toolbar.replaceTitle'), body: t('toolbar.replaceConfirm'), confirmLabel: t('toolbar.replace') };
}

interface Options {
  editor: EditorApi;
  server: ServerGraph;
  catalog: CatalogIndex;
  confirm: Confirm;
  choose: Choose;
  /** Fit the view to the graph once it is drawn. */
  fitSoon: () => void;
  /** The canvas's shape, when it is on screen. */
  viewShape: () => LayoutView | undefined;
  /** Lay out the nodes as measured (one undo step with the change named `step`), then fit. */
  layoutSoon: (step: string) => void;
}

export function useGraphDocument({
  editor,
  server,
  catalog,
  confirm,
  choose,
  fitSoon,
  viewShape,
  layoutSoon,
}: Options) {
  const { t } = useTranslation();
  const notify = useNotify();
  const { loadGraph, selectOnly } = editor;
  const { detach, adopt } = server;

  /** Show a graph that is not (yet) saved on the server: a new one, an import, a template. */
  const load = useCallback(
    (graph: GraphSpec) => {
      loadGraph(graph);
      detach();
      // An empty graph has nothing to fit: a fit asked for now would wait for the first node
      // dropped and then move and zoom the view under the pointer.
      if (graph.nodes.length) fitSoon();
    },
    [loadGraph, detach, fitSoon],
  );

  /** Whether the canvas may be replaced: at once when nothing on it is unsaved, else after asking (in the page). */
  const mayReplace = useCallback(
    async () => !server.dirty || (await confirm(replaceQuestion(t))),
    [server.dirty, confirm, t],
  );

  /**
   * A template, laid out for this view (its stored positions are for no view in particular): first
   * with typical node sizes, then again once the nodes are measured, as one undo step.
   */
  const openTemplate = useCallback(
    async (template: GraphSpec) => {
      if (!(await mayReplace())) return;
      const graph = { ...template, nodes: template.nodes.map(({ position: _position, ...node }) => node) };
      loadGraph(graph, { view: viewShape(), step: 'template' });
      detach();
      layoutSoon('template');
    },
    [mayReplace, loadGraph, detach, viewShape, layoutSoon],
  );

  /** Show a graph saved on the server; saving again makes its next version. */
  const openSaved = useCallback(
    async (saved: SavedGraph) => {
      if (!(await mayReplace())) return;
      const graph = { ...saved.graph, name: saved.name };
      const flow = graphToFlow(graph, catalog);
      loadGraph(graph);
      adopt(saved, graphKey(flowToGraph(flow.nodes, flow.edges, flow.meta)));
      if (graph.nodes.length) fitSoon();
    },
    [mayReplace, catalog, loadGraph, adopt, fitSoon],
  );

  const { setMeta } = editor;
  const saveNow = useCallback(
    async (asNew: boolean, graph?: GraphSpec) => {
      try {
        const link = await server.save(graph, asNew);
        if (graph) setMeta({ ...editor.meta, name: link.name });
        notify({ kind: 'success', message: t('toolbar.savedToast', { name: link.name, version: link.version }) });
        return link;
      } catch (error) {
        // A rename onto another graph's name (409) is worded here: the server's sentence is English.
        const taken = error instanceof ApiError && error.status === 409;
        const message = taken ? t('toolbar.nameTaken', { name: editor.meta.name.trim() }) : errorText(error, t);
        notify({ kind: 'error', message: t('toolbar.saveFailed', { message }) });
        throw error;
      }
    },
    [server, setMeta, editor.meta, notify, t],
  );

  /** Save; a canvas renamed since it was opened asks first whether it is a new graph or a rename. */
  const save = useCallback(async () => {
    const { link } = server;
    if (link && saveKind(link, editor.meta.name) === 'askRename') {
      const names = { old: link.name, name: editor.meta.name.trim() };
      const choice = await choose({
        title: t('toolbar.renameTitle', names),
        body: t('toolbar.renameBody', names),
        confirmLabel: t('toolbar.saveAsNew'),
        alternativeLabel: t('toolbar.renameSaved'),
      });
      if (choice === null) return null;
      return saveNow(choice === 'confirm');
    }
    return saveNow(false);
  }, [server, editor.meta.name, choose, saveNow, t]);

  /** "Save as": always a new graph; under the open graph's own name it is named as its copy. */
  const saveAs = useCallback(async () => {
    const name = editor.meta.name.trim() || 'Untitled';
    const link = server.link;
    const newName = link && sameName(link.name, name) ? t('toolbar.copyName', { name }) : name;
    return saveNow(true, { ...editor.graph, name: newName });
  }, [editor.meta.name, editor.graph, server.link, saveNow, t]);

  /** A new empty graph, after asking (in the page) when the canvas has work; Undo brings it back. */
  const newGraph = useCallback(async () => {
    if (editor.nodes.length) {
      const yes = await confirm({
        title: t('toolbar.new'),
        body: t('toolbar.newConfirm'),
        confirmLabel: t('toolbar.new'),
      });
      if (!yes) return;
    }
    load({ ...EMPTY_GRAPH });
  }, [editor.nodes.length, confirm, load, t]);

  const exportGraph = useCallback(
    () => downloadJson(fileNameFor(editor.meta.name), editor.graph),
    [editor.meta.name, editor.graph],
  );

  const importFile = useCallback(
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
      if (!(await mayReplace())) return;
      load(parsed.graph);
      notify({ kind: 'success', message: t('io.imported', { name: parsed.graph.name }) });
    },
    [mayReplace, load, notify, t],
  );

  // What another page asked for before opening the editor (it asked the user already).
  const graphNow = useRef(editor.graph);
  const linkNow = useRef(server.link);
  useLayoutEffect(() => {
    graphNow.current = editor.graph;
    linkNow.current = server.link;
  }, [editor.graph, server.link]);
  useEffect(() => {
    const request = takeEditRequest();
    if (request?.kind === 'graph') {
      load({ ...request.graph, version: 1, name: request.name || request.graph.name || 'Untitled' });
    } else if (request?.kind === 'dataset') {
      const type = request.dataset.node?.type ?? UPLOADED_TYPE;
      // A table opens a starter graph that trains as it is (a new graph, named after the table),
      // unless the open graph is a table graph that trains already: then its table is swapped.
      const starter =
        request.dataset.node && request.dataset.columns && !tableGoesIntoGraph(graphNow.current, catalog)
          ? tableStarterGraph({ ...request.dataset, node: request.dataset.node, columns: request.dataset.columns })
          : null;
      if (starter) {
        detach();
        loadGraph(starter);
        fitSoon();
        selectOnly([starter.nodes[0]!.id]);
        return;
      }
      // A dataset of another port type (a table for an image CNN) starts a new graph of its own.
      const start = fitsGraph(graphNow.current, type, catalog)
        ? graphNow.current
        : { ...EMPTY_GRAPH, name: request.dataset.name };
      if (start !== graphNow.current) detach();
      const { graph, nodeId } = withUploadedDataset(start, request.dataset);
      // A draft (a template) is renamed for its new data; a saved graph keeps its name.
      const name =
        graph.nodes.length === 1
          ? request.dataset.name
          : linkNow.current === null
            ? nameForDataset(graph.name, request.dataset.name)
            : graph.name;
      loadGraph({ ...graph, name });
      selectOnly([nodeId]);
    }
  }, [load, loadGraph, selectOnly, catalog, detach, fitSoon]);

  return { load, openTemplate, openSaved, save, saveAs, newGraph, exportGraph, importFile };
}
