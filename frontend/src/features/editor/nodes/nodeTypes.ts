import type { NodeProps, NodeTypes } from '@xyflow/react';
import { createElement, memo } from 'react';
import type { DatasetNode, EditorNode, LayerNode, ModelNode, OpNode, TrainNode, UnknownNode } from '../logic/types';
import { CatalogNodeCard } from './CatalogNodeCard';

// One memoised component per category (React Flow re-renders a node only when its props change).
const card = (props: NodeProps) => createElement(CatalogNodeCard, props as NodeProps<EditorNode>);

export const DatasetNodeView = memo((props: NodeProps<DatasetNode>) => card(props));
export const OpNodeView = memo((props: NodeProps<OpNode>) => card(props));
export const LayerNodeView = memo((props: NodeProps<LayerNode>) => card(props));
export const ModelNodeView = memo((props: NodeProps<ModelNode>) => card(props));
export const TrainNodeView = memo((props: NodeProps<TrainNode>) => card(props));
export const UnknownNodeView = memo((props: NodeProps<UnknownNode>) => card(props));

DatasetNodeView.displayName = 'DatasetNode';
OpNodeView.displayName = 'OpNode';
LayerNodeView.displayName = 'LayerNode';
ModelNodeView.displayName = 'ModelNode';
TrainNodeView.displayName = 'TrainNode';
UnknownNodeView.displayName = 'UnknownNode';

/** At module scope, so React Flow never sees a new object (STYLE.md item 8). */
export const nodeTypes = {
  dataset: DatasetNodeView,
  op: OpNodeView,
  layer: LayerNodeView,
  model: ModelNodeView,
  train: TrainNodeView,
  unknown: UnknownNodeView,
} satisfies NodeTypes;
