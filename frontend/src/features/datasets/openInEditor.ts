// "Use in editor": the dataset becomes the dataset node of the graph open in the editor (replacing
// the one it has, connections kept, or added on the left); a table opens a starter graph of its
// own. The editor makes the change itself when it opens, as one undoable step; when a graph is
// open the user is asked first.
import { navigate } from '../../app/router';
import type { Confirm } from '../../ui/ConfirmDialog';
import type { DatasetNodeSpec } from '../editor/logic/datasetNode';
import { TABLE_NODE_TYPE, tableGoesIntoGraph, type TableColumn } from '../editor/logic/tableStarter';
import type { GraphSpec } from '../../api/types';
import type { CatalogIndex } from '../catalog/catalogIndex';
import { loadDraft, openGraphState, requestEdit } from '../editor/storage';

type Translate = (key: string, options?: Record<string, unknown>) => string;

/** Whether "Use in editor" opens a starter graph for the dataset: a table that lists its columns,
 * unless the graph open in the editor is a table graph that trains already (`draft`). */
export function opensStarter(
  dataset: { node?: DatasetNodeSpec; columns?: TableColumn[] },
  draft: Pick<GraphSpec, 'nodes'> | null,
  catalog: CatalogIndex,
): boolean {
  return dataset.node?.type === TABLE_NODE_TYPE && !!dataset.columns?.length && !tableGoesIntoGraph(draft, catalog);
}

/** Whether the dataset was put in the editor (or opened in a starter graph), the user said no, or
 * the browser refused. */
export async function openDatasetInEditor(
  dataset: { id: string; name: string; node?: DatasetNodeSpec; columns?: TableColumn[] },
  confirm: Confirm,
  t: Translate,
  catalog: CatalogIndex,
): Promise<'used' | 'started' | 'cancelled' | 'failed'> {
  const open = openGraphState();
  const starter = opensStarter(dataset, loadDraft(), catalog);
  if (open) {
    const yes = await confirm({
      title: t(starter ? 'datasets.useTableTitle' : 'datasets.useTitle'),
      body: t(starter ? 'datasets.useTableBody' : 'datasets.useBody', { dataset: dataset.name, graph: open.name }),
      confirmLabel: t('datasets.useInEditor'),
    });
    if (!yes) return 'cancelled';
  }
  const request = {
    id: dataset.id,
    name: dataset.name,
    ...(dataset.node ? { node: dataset.node } : {}),
    // A table's columns: the editor opens a starter graph that trains it (logic/tableStarter).
    ...(dataset.columns ? { columns: dataset.columns } : {}),
  };
  if (!requestEdit({ kind: 'dataset', dataset: request })) return 'failed';
  navigate('/editor');
  return starter ? 'started' : 'used';
}
