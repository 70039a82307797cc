// "Train": check the graph on the server, open the dialog, then put its epochs into the open graph
// (through the editor's own update path: the canvas shows it, Undo reverts it), save exactly that
// graph and queue the task. Problems the server finds stay on the nodes while the graph is unchanged.
import { useCallback, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, validateGraph } from '../../api/graphs';
import type { GraphError, GraphSpec } from '../../api/types';
import { navigate } from '../../app/router';
import { pathFor } from '../../app/routes';
import { useNotify } from '../../ui/toast';
import type { CatalogIndex } from '../catalog/catalogIndex';
import { submitTask } from '../tasks/api';
import type { TrainStep } from './dialogs/TrainDialog';
import { validationKey } from './logic/convert';
import { trainNodeOf } from '../catalog/taskKind';
import { blockingErrors } from './logic/severity';
import { firstFailingNode, graphProblemsOf, mergeErrors, withEpochs } from './logic/train';
import type { EditorApi } from './useEditor';
import type { ServerGraph } from './useServerGraph';
import type { ValidationState } from './useValidation';
import { errorText } from '../../i18n/errorText';

interface Options {
  editor: EditorApi;
  server: ServerGraph;
  catalog: CatalogIndex;
  liveValidation: ValidationState;
  /** Select a node and bring it into view. */
  focusNode: (nodeId: string) => void;
  openProblems: () => void;
  /** Whether a dialog is open (Train then does nothing), and opening or closing the Train dialog. */
  dialogOpen: boolean;
  setTrainDialog: (open: boolean) => void;
}

export function useTrain({
  editor,
  server,
  catalog,
  liveValidation,
  focusNode,
  openProblems,
  dialogOpen,
  setTrainDialog,
}: Options) {
  const { t } = useTranslation();
  const notify = useNotify();
  const [training, setTraining] = useState<'checking' | 'starting' | null>(null);
  const [problems, setProblems] = useState<{ key: string; errors: GraphError[] } | null>(null);
  const { graph, nodes, updateParam } = editor;
  // The graph now, for the callbacks below (the dialog's submit runs after renders of its own).
  const latest = useRef({ graph, nodeIds: new Set<string>() });
  useLayoutEffect(() => {
    latest.current = { graph, nodeIds: new Set(nodes.map((node) => node.id)) };
  }, [graph, nodes]);

  // What Train heard from the server is shown like live validation (badges, fields, Problems)
  // until the graph changes; then live validation alone speaks again.
  const keyNow = useMemo(() => validationKey(graph), [graph]);
  const extraErrors = problems && problems.key === keyNow ? problems.errors : null;
  const validation = useMemo<ValidationState>(() => {
    if (!extraErrors) return liveValidation;
    const result = liveValidation.result ?? { ok: false, errors: [], shapes: {}, dataset: null, model_inputs: {} };
    const errors = mergeErrors(result.errors, extraErrors);
    const status = liveValidation.status === 'empty' ? 'done' : liveValidation.status;
    return { ...liveValidation, status, result: { ...result, ok: blockingErrors(errors).length === 0, errors } };
  }, [liveValidation, extraErrors]);

  /** Problems found by Train: keep them on the nodes, open the list and show the first node. */
  const showProblems = useCallback(
    (errors: GraphError[], key: string, title: string) => {
      setProblems({ key, errors });
      openProblems();
      const first = firstFailingNode(errors, latest.current.nodeIds);
      if (first) focusNode(first);
      notify({ kind: 'error', title, message: t('train.invalid', { count: errors.length }) });
    },
    [focusNode, openProblems, notify, t],
  );

  /** Train: check the graph now (live validation may be behind), then the dialog. */
  const train = useCallback(async () => {
    if (training || dialogOpen) return;
    const current = latest.current.graph;
    if (!current.nodes.length) {
      notify({ kind: 'info', title: t('train.notReady'), message: t('train.empty') });
      return;
    }
    setTraining('checking');
    try {
      const result = await validateGraph(current);
      // Warnings alone do not stop Train: the canvas shows them already.
      if (blockingErrors(result.errors).length)
        showProblems(result.errors, validationKey(current), t('train.notReady'));
      else setTrainDialog(true);
    } catch (error) {
      notify({ kind: 'error', message: t('train.checkFailed', { message: errorText(error, t) }) });
    } finally {
      setTraining(null);
    }
  }, [training, dialogOpen, notify, t, showProblems, setTrainDialog]);

  const trainNode = useMemo(() => trainNodeOf(graph, catalog), [catalog, graph]);
  const schema = trainNode ? catalog.byType.get(trainNode.type)?.params_schema : undefined;

  /** From the dialog: the epochs go into the train node, that graph is saved, the task queued. */
  const start = useCallback(
    async (options: { name: string; epochs: number | null }, onStep: (step: TrainStep) => void) => {
      const current = latest.current.graph;
      // The graph the canvas holds once the edit below is rendered: the one saved and trained.
      const train = trainNodeOf(current, catalog);
      const next: GraphSpec =
        options.epochs === null ? current : withEpochs(current, train?.id ?? null, options.epochs);
      if (next !== current && train) updateParam(train.id, 'epochs', options.epochs ?? undefined);
      setTraining('starting');
      try {
        let source: { graph_id: string } | { graph: GraphSpec };
        try {
          const link = server.link && !server.dirty && next === current ? server.link : await server.save(next);
          source = { graph_id: link.id };
        } catch (error) {
          // Saving is not possible (storage full, no rights): train the graph as it is all the same.
          notify({ kind: 'info', message: t('train.unsaved', { message: errorText(error, t) }) });
          source = { graph: next };
        }
        onStep('submitting');
        let task;
        try {
          task = await submitTask(source, options.name);
        } catch (error) {
          const refused = error instanceof ApiError && error.status === 422 ? graphProblemsOf(error.body) : null;
          if (!refused?.length) throw error;
          setTrainDialog(false);
          showProblems(refused, validationKey(next), t('train.refused'));
          return;
        }
        notify({ kind: 'success', message: t('train.started', { name: task.name }) });
        setTrainDialog(false);
        navigate(pathFor('tasks', task.id));
      } finally {
        setTraining(null);
      }
    },
    [updateParam, server, notify, t, showProblems, setTrainDialog, catalog],
  );

  return { validation, training, train, start, schema, trainNode };
}
