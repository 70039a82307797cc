// "Use in editor": the dataset becomes the dataset node of the graph open in the editor (replacing
// the one it has, connections kept, or added on the left). The editor makes the change itself when
// it opens, as one undoable step; when a graph is open the user is asked first.
import { navigate } from '../../app/router';
import type { Confirm } from '../../ui/ConfirmDialog';
import type { DatasetNodeSpec } from '../editor/logic/datasetNode';
import { openGraphState, requestEdit } from '../editor/storage';

type Translate = (key: string, options?: Record<string, unknown>) => string;

/** Whether the dataset was put in the editor, the user said no, or the browser refused. */
export async function openDatasetInEditor(
  dataset: { id: string; name: string; node?: DatasetNodeSpec },
  confirm: Confirm,
  t: Translate,
): Promise<'used' | 'cancelled' | 'failed'> {
  const open = openGraphState();
  if (open) {
    const yes = await confirm({
      title: t('datasets.useTitle'),
      body: t('datasets.useBody', { dataset: dataset.name, graph: open.name }),
      confirmLabel: t('datasets.useInEditor'),
    });
    if (!yes) return 'cancelled';
  }
  const request = { id: dataset.id, name: dataset.name, ...(dataset.node ? { node: dataset.node } : {}) };
  if (!requestEdit({ kind: 'dataset', dataset: request })) return 'failed';
  navigate('/editor');
  return 'used';
}
