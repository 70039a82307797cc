import type { Edge, Node } from '@xyflow/react';
import type { Category, JsonObject } from '../../../api/types';
import type { SearchSpec } from './search';

/** What a node carries: plain JSON only, exactly what the graph file stores (STYLE.md item 8). */
export type EditorNodeData = {
  /** The catalog type, e.g. "layer.Conv2d". */
  kind: string;
  params: JsonObject;
  label?: string;
  /** This node's part of the graph's search section: param -> range or choices. */
  search?: Record<string, SearchSpec>;
};

/** React Flow node types are the catalog categories; 'unknown' shows a type the catalog lacks. */
export type NodeCategory = Category | 'unknown';

export type DatasetNode = Node<EditorNodeData, 'dataset'>;
export type OpNode = Node<EditorNodeData, 'op'>;
export type LayerNode = Node<EditorNodeData, 'layer'>;
export type ModelNode = Node<EditorNodeData, 'model'>;
export type TrainNode = Node<EditorNodeData, 'train'>;
export type UnknownNode = Node<EditorNodeData, 'unknown'>;
export type EditorNode = DatasetNode | OpNode | LayerNode | ModelNode | TrainNode | UnknownNode;

export type ShapeEdge = Edge<Record<string, never>, 'shape'>;
export type EditorEdge = ShapeEdge;

export interface GraphMeta {
  name: string;
  description: string;
}

/** What undo/redo restores: the graph as drawn, without selection or measured sizes. */
export interface Snapshot {
  nodes: EditorNode[];
  edges: EditorEdge[];
}
