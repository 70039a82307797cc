// "Open in editor": the task's graph snapshot becomes the editor's draft. The editor reads its
// draft from localStorage when it mounts (src/features/editor/storage.ts), so writing the draft
// and then changing page is the whole hand-over. The copy is not linked to a saved graph: the
// snapshot may differ from that graph's current version, and saving it makes a new graph.
import { navigate } from '../../app/router';
import type { GraphSpec } from '../../api/types';
import { loadDraft, saveDraft, storeLink } from '../editor/storage';

/** Whether opening a graph would replace work on the canvas (a non-empty draft). */
export function canvasHasWork(): boolean {
  return (loadDraft()?.nodes.length ?? 0) > 0;
}

export function openGraphInEditor(graph: GraphSpec, name: string): boolean {
  const draft: GraphSpec = { ...graph, version: 1, name: name || graph.name || 'Untitled' };
  if (!saveDraft(draft)) return false;
  storeLink(null);
  navigate('/editor');
  return true;
}
