// "Use in editor": the dataset becomes the dataset node of the editor's draft graph (replacing the
// one it has, connections kept, or added on the left), and the editor opens with that node
// selected. The draft stays linked to its saved graph: the change shows there as unsaved.
import { navigate } from '../../app/router';
import type { GraphSpec } from '../../api/types';
import { withUploadedDataset } from '../editor/logic/datasetNode';
import { loadDraft, requestFocus, saveDraft } from '../editor/storage';

export function openDatasetInEditor(dataset: { id: string; name: string }): boolean {
  const draft: GraphSpec = loadDraft() ?? { version: 1, name: dataset.name, description: '', nodes: [], edges: [] };
  const { graph, nodeId } = withUploadedDataset(draft, dataset);
  if (!saveDraft(graph)) return false;
  requestFocus(nodeId);
  navigate('/editor');
  return true;
}
