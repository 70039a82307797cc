import {
  BaseEdge,
  EdgeLabelRenderer,
  getBezierPath,
  useStore,
  type EdgeProps,
  type EdgeTypes,
  type ReactFlowState,
} from '@xyflow/react';
import { memo, useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { useEditorView } from '../EditorContext';
import { edgeLabel } from '../../inputs/registry';
import type { ShapeEdge } from '../logic/types';
import { labelBottom, lanePath, laneBetween, type Box } from './lane';

/** A target this far left of its source or more: the edge runs backwards (a wrapped chain). */
const BACKWARDS = 20;

function* boxesOf(state: ReactFlowState): Generator<Box> {
  for (const node of state.nodeLookup.values()) {
    const { x, y } = node.internals.positionAbsolute;
    yield { x, y, width: node.measured.width ?? 180, height: node.measured.height ?? 110 };
  }
}

/** An edge labelled with the shape its source node outputs, as inferred by validation. */
export const ShapeEdgeView = memo(function ShapeEdgeView({
  id,
  source,
  sourceX,
  sourceY,
  targetX,
  targetY,
  sourcePosition,
  targetPosition,
  markerEnd,
  selected,
}: EdgeProps<ShapeEdge>) {
  const shape = useEditorView((view) => view.shapes[source]);
  const { t } = useTranslation();
  // Forward edges (nearly all) answer null at once; only backward ones look at the nodes.
  const lane = useStore(
    useCallback(
      (state: ReactFlowState) =>
        targetX < sourceX - BACKWARDS
          ? laneBetween({ x: sourceX, y: sourceY }, { x: targetX, y: targetY }, boxesOf(state))
          : null,
      [sourceX, sourceY, targetX, targetY],
    ),
  );
  const [path, labelX, labelY] =
    lane === null
      ? getBezierPath({ sourceX, sourceY, sourcePosition, targetX, targetY, targetPosition })
      : [lanePath({ x: sourceX, y: sourceY }, { x: targetX, y: targetY }, lane), (sourceX + targetX) / 2, lane];
  const bottom = labelBottom({ x: sourceX, y: sourceY }, { x: targetX, y: targetY }, labelY);
  return (
    <>
      <BaseEdge id={id} path={path} markerEnd={markerEnd} className={selected ? 'dedge is-selected' : 'dedge'} />
      {shape && (
        <EdgeLabelRenderer>
          <div
            className={`dedge__label${selected ? ' is-selected' : ''}`}
            style={{ transform: `translate(-50%, -100%) translate(${labelX}px, ${bottom}px)` }}
            data-edge={id}
          >
            {edgeLabel(shape, t)}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
});

export const edgeTypes = { shape: ShapeEdgeView } satisfies EdgeTypes;
