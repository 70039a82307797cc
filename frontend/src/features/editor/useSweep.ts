// "Sweep": save the open graph (its search section with it) and start a sweep of that saved
// version, then show the sweep's page. The graph's problems, the search section's included, are
// already on the canvas from live validation; a refusal says how many there are.
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../../api/graphs';
import type { GraphSpec } from '../../api/types';
import { navigate } from '../../app/router';
import { pathFor } from '../../app/routes';
import { errorText } from '../../i18n/errorText';
import { useNotify } from '../../ui/toast';
import type { CatalogIndex } from '../catalog/catalogIndex';
import { chartedMetrics, graphKind } from '../catalog/taskKind';
import { createSweep } from '../sweeps/api';
import type { SweepOptions } from './dialogs/SweepDialog';
import { graphProblemsOf } from './logic/train';
import type { ServerGraph } from './useServerGraph';

/** The validation metrics a sweep of the graph may optimise, as the server names them, best first. */
export function sweepObjectives(graph: GraphSpec, catalog: CatalogIndex): string[] {
  const kind = graphKind(graph, catalog);
  if (!kind) return [];
  return [...chartedMetrics(catalog, kind).map((metric) => `val_${metric.key}`), 'val_loss'];
}

export function useSweep(graph: GraphSpec, server: ServerGraph, onClose: () => void) {
  const { t } = useTranslation();
  const notify = useNotify();
  return useCallback(
    async (options: SweepOptions) => {
      let source: { graph_id: string } | { graph: GraphSpec };
      try {
        const link = server.link && !server.dirty ? server.link : await server.save(graph);
        source = { graph_id: link.id };
      } catch (error) {
        // Saving is not possible (storage full, no rights): sweep the graph as it is all the same.
        notify({ kind: 'info', message: t('train.unsaved', { message: errorText(error, t) }) });
        source = { graph };
      }
      try {
        const sweep = await createSweep(source, options);
        notify({ kind: 'success', message: t('sweeps.dialog.started', { name: sweep.name }) });
        onClose();
        navigate(pathFor('sweeps', sweep.id));
      } catch (error) {
        const refused = error instanceof ApiError && error.status === 422 ? graphProblemsOf(error.body) : null;
        if (!refused?.length) throw error;
        throw new Error(t('sweeps.dialog.invalid', { count: refused.length }), { cause: error });
      }
    },
    [graph, server, notify, t, onClose],
  );
}
