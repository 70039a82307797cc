// "Use in editor" on the Datasets page: an uploaded dataset becomes the graph's dataset node.
import type { GraphSpec } from '../../../api/types';
import { nextNodeId } from './clipboard';

export const UPLOADED_TYPE = 'dataset.uploaded';
/** Where a dataset node goes when the graph has none: left of everything else. */
const COLUMN = 230;

/**
 * The graph reading `datasetId`: its (first) dataset node is replaced by an uploaded-dataset node
 * at the same place and with the same connections, or one is added on the left when it has none.
 * Returns the graph and the node's id.
 */
export function withUploadedDataset(
  graph: GraphSpec,
  dataset: { id: string; name: string },
): { graph: GraphSpec; nodeId: string } {
  const label = dataset.name.slice(0, 200);
  const params = { dataset_id: dataset.id };
  const current = graph.nodes.find((node) => node.type.startsWith('dataset.'));
  if (current?.type === UPLOADED_TYPE) {
    // Already an uploaded-dataset node: only the dataset changes.
    const nodes = graph.nodes.map((node) => (node === current ? { ...node, params, label } : node));
    return { graph: { ...graph, nodes }, nodeId: current.id };
  }
  const taken = new Set(graph.nodes.map((node) => node.id));
  const id = nextNodeId(UPLOADED_TYPE, taken);
  if (current) {
    const rename = (nodeId: string) => (nodeId === current.id ? id : nodeId);
    return {
      graph: {
        ...graph,
        nodes: graph.nodes.map((node) =>
          node === current ? { id, type: UPLOADED_TYPE, params, label, position: node.position ?? null } : node,
        ),
        edges: graph.edges.map((edge) =>
          edge.source === current.id || edge.target === current.id
            ? {
                ...edge,
                id: edge.id?.includes(current.id) ? edge.id.split(current.id).join(id) : edge.id,
                source: rename(edge.source),
                target: rename(edge.target),
                // The dataset node's output port; the uploaded node's is found by the editor.
                sourceHandle: edge.source === current.id ? null : edge.sourceHandle,
              }
            : edge,
        ),
      },
      nodeId: id,
    };
  }
  const placed = graph.nodes.map((node) => node.position).filter((p): p is { x: number; y: number } => !!p);
  const position = placed.length
    ? { x: Math.min(...placed.map((p) => p.x)) - COLUMN, y: Math.min(...placed.map((p) => p.y)) }
    : { x: 40, y: 60 };
  const node = { id, type: UPLOADED_TYPE, params, label, position };
  return { graph: { ...graph, nodes: [node, ...graph.nodes] }, nodeId: id };
}
