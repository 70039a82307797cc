// "Use in editor" on the Datasets page: an uploaded dataset becomes the graph's dataset node.
import type { GraphSpec, JsonObject } from '../../../api/types';
import { producedType, type CatalogIndex } from '../../catalog/catalogIndex';
import { nextNodeId } from './clipboard';

export const UPLOADED_TYPE = 'dataset.uploaded';

/** The node that reads a dataset, as the server describes it (DatasetPublic.node): a Table node
 * for a table, an uploaded-dataset node for images. */
export interface DatasetNodeSpec {
  type: string;
  params: JsonObject;
}
/** Where a dataset node goes when the graph has none: left of everything else. */
const COLUMN = 230;

/** The node spec in a value from the server or storage; undefined unless it is one. */
export function asDatasetNode(value: unknown): DatasetNodeSpec | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const { type, params } = value as { type?: unknown; params?: unknown };
  if (typeof type !== 'string' || !type.startsWith('dataset.')) return undefined;
  if (!params || typeof params !== 'object' || Array.isArray(params)) return undefined;
  return { type, params: params as JsonObject };
}

/**
 * The graph reading `datasetId`: its (first) dataset node is replaced by an uploaded-dataset node
 * at the same place and with the same connections, or one is added on the left when it has none.
 * Returns the graph and the node's id.
 */
export function withUploadedDataset(
  graph: GraphSpec,
  dataset: { id: string; name: string; node?: DatasetNodeSpec },
): { graph: GraphSpec; nodeId: string } {
  const label = dataset.name.slice(0, 200);
  const type = dataset.node?.type ?? UPLOADED_TYPE;
  const params = dataset.node?.params ?? { dataset_id: dataset.id };
  const current = graph.nodes.find((node) => node.type.startsWith('dataset.'));
  if (current?.type === type) {
    // Already a node of that type: only the dataset changes.
    const nodes = graph.nodes.map((node) => (node === current ? { ...node, params, label } : node));
    return { graph: { ...graph, nodes }, nodeId: current.id };
  }
  const taken = new Set(graph.nodes.map((node) => node.id));
  const id = nextNodeId(type, taken);
  if (current) {
    const rename = (nodeId: string) => (nodeId === current.id ? id : nodeId);
    return {
      graph: {
        ...graph,
        nodes: graph.nodes.map((node) =>
          node === current ? { id, type, params, label, position: node.position ?? null } : node,
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
  const node = { id, type, params, label, position };
  return { graph: { ...graph, nodes: [node, ...graph.nodes] }, nodeId: id };
}

/**
 * Whether a dataset of node type `type` can take the place of the graph's dataset node: when they
 * produce the same port type (an uploaded image set for the built-in one). A table dropped into an
 * image CNN left a graph with an error on every layer; such a dataset opens a new graph instead.
 */
export function fitsGraph(graph: GraphSpec, type: string, catalog: CatalogIndex): boolean {
  const current = graph.nodes.find((node) => node.type.startsWith('dataset.'));
  if (!current) return true;
  const produced = (nodeType: string) => {
    const port = catalog.byType.get(nodeType)?.outputs[0];
    return port ? producedType(port) : null;
  };
  return produced(current.type) === produced(type);
}

/**
 * The name of a draft whose dataset node now reads `dataset`: a template is named after the data
 * it was made for ("MLP (breast cancer)"), which a model trained on another table would keep; the
 * part in brackets names the new dataset instead ("MLP (penguins)"). Other names stay.
 */
export function nameForDataset(name: string, dataset: string): string {
  const match = /^(.*\S)\s*([(（])[^()（）]+([)）])$/u.exec(name);
  if (!match) return name;
  const [, head, open, close] = match;
  return open === '(' ? `${head} (${dataset}${close}` : `${head}${open}${dataset}${close}`;
}
