// "Open in editor": the task's graph snapshot replaces the graph open in the editor. The editor
// makes the change itself when it opens (one undoable step), so it stays the only writer of the
// open graph. The copy is not linked to a saved graph: the snapshot may differ from that graph's
// current version, and saving it makes a new graph.
import { navigate } from '../../app/router';
import type { GraphSpec } from '../../api/types';
import { openGraphState, requestEdit } from '../editor/storage';

/** Whether opening a graph would replace unsaved work on the canvas: then the user is asked. */
export function canvasHasWork(): boolean {
  return openGraphState()?.unsaved ?? false;
}

export function openGraphInEditor(graph: GraphSpec, name: string): boolean {
  if (!requestEdit({ kind: 'graph', graph, name })) return false;
  navigate('/editor');
  return true;
}
