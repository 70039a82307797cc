import { BaseEdge, EdgeLabelRenderer, getBezierPath, type EdgeProps, type EdgeTypes } from '@xyflow/react';
import { memo } from 'react';
import { useEditorView } from '../EditorContext';
import { prettyShape } from '../logic/summary';
import type { ShapeEdge } from '../logic/types';

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
  const [path, labelX, labelY] = getBezierPath({ sourceX, sourceY, sourcePosition, targetX, targetY, targetPosition });
  return (
    <>
      <BaseEdge id={id} path={path} markerEnd={markerEnd} className={selected ? 'dedge is-selected' : 'dedge'} />
      {shape && (
        <EdgeLabelRenderer>
          <div
            className={`dedge__label${selected ? ' is-selected' : ''}`}
            style={{ transform: `translate(-50%, calc(-100% - 6px)) translate(${labelX}px, ${labelY}px)` }}
            data-edge={id}
          >
            {prettyShape(shape)}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
});

export const edgeTypes = { shape: ShapeEdgeView } satisfies EdgeTypes;
