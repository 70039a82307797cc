// Adding nodes from the palette: dropped where the pointer lets go, or (from the keyboard) at a
// free spot in the middle of the view. Neither moves or zooms the view.
import { useReactFlow } from '@xyflow/react';
import { useCallback, useLayoutEffect, useRef, type DragEvent, type RefObject } from 'react';
import { NODE_SIZE } from './logic/insertNode';
import { findFreeSpot } from './logic/placement';
import type { EditorEdge, EditorNode } from './logic/types';
import { DRAG_MIME } from './panels/Palette';
import type { EditorApi } from './useEditor';

/** Where a dropped node's top-left lands relative to the pointer: the pointer holds its header. */
const DROP_OFFSET = { x: 90, y: 17 };

export function useAddNode(editor: EditorApi, wrapper: RefObject<HTMLDivElement | null>) {
  const flow = useReactFlow<EditorNode, EditorEdge>();
  const { addNode, nodes } = editor;
  // The nodes for the callbacks below, which must not change per drag frame (the palette is memoised).
  const latestNodes = useRef(nodes);
  useLayoutEffect(() => {
    latestNodes.current = nodes;
  }, [nodes]);

  const onDragOver = useCallback((event: DragEvent) => {
    if (!event.dataTransfer.types.includes(DRAG_MIME)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
  }, []);

  const onDrop = useCallback(
    (event: DragEvent) => {
      const kind = event.dataTransfer.getData(DRAG_MIME);
      if (!kind) return;
      event.preventDefault();
      const point = flow.screenToFlowPosition({ x: event.clientX, y: event.clientY });
      // Dropped on an edge whose types fit, the node goes into it.
      addNode(kind, { x: point.x - DROP_OFFSET.x, y: point.y - DROP_OFFSET.y }, { intoEdge: true });
    },
    [flow, addNode],
  );

  const addAtCentre = useCallback(
    (kind: string) => {
      const box = wrapper.current?.getBoundingClientRect();
      const centre = box ? { x: box.left + box.width / 2, y: box.top + box.height / 2 } : { x: 400, y: 300 };
      const point = flow.screenToFlowPosition(centre);
      const taken = latestNodes.current.map((node) => ({
        ...node.position,
        width: node.measured?.width ?? NODE_SIZE.width,
        height: node.measured?.height ?? NODE_SIZE.height,
      }));
      const wanted = { x: point.x - NODE_SIZE.width / 2, y: point.y - NODE_SIZE.height / 2 };
      addNode(kind, findFreeSpot(wanted, NODE_SIZE, taken));
    },
    [flow, addNode, wrapper],
  );

  return { onDragOver, onDrop, addAtCentre };
}
