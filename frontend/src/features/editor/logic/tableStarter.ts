// "Use in editor" on an uploaded table: a starter graph that trains as it is. The table's node
// with its target chosen, the preparation validation would ask for (tablePrep), a small network
// (Linear 64 → ReLU → Linear auto) and the train node the target's kind calls for: a category is
// classified, a number regressed. A lone table node left the user with "the graph needs a train
// node", and wiring the table straight to a train node is refused.
import type { GraphEdgeSpec, GraphNodeSpec, GraphSpec, JsonObject } from '../../../api/types';
import type { CatalogIndex } from '../../catalog/catalogIndex';
import { trainNodeOf } from '../../catalog/taskKind';
import { nextNodeId } from './clipboard';
import type { DatasetNodeSpec } from './datasetNode';
import { layeredLayout } from './layout';
import { preparationTypes } from './tablePrep';

export const TABLE_NODE_TYPE = 'dataset.table';

/** A column as the Datasets page lists it (DatasetPublic.columns). */
export interface TableColumn {
  name: string;
  kind: 'number' | 'category';
  missing: number;
}

/**
 * Whether an uploaded table goes into the open graph instead of a starter graph: a table graph that
 * already trains (a template, a graph of one's own) only has its table swapped, as the Datasets
 * page says; an empty graph, a lone node or an image graph gets the starter.
 */
export function tableGoesIntoGraph(graph: Pick<GraphSpec, 'nodes'> | null, catalog: CatalogIndex): boolean {
  if (!graph) return false;
  return graph.nodes.some((node) => node.type === TABLE_NODE_TYPE) && trainNodeOf(graph, catalog) !== null;
}

/** The columns in a value from the server or storage; undefined unless it is a list of them. */
export function asColumns(value: unknown): TableColumn[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const columns = value.filter(
    (column): column is TableColumn =>
      !!column &&
      typeof column === 'object' &&
      typeof (column as TableColumn).name === 'string' &&
      ((column as TableColumn).kind === 'number' || (column as TableColumn).kind === 'category'),
  );
  if (columns.length !== value.length) return undefined;
  return columns.map(({ name, kind, missing }) => ({ name, kind, missing: typeof missing === 'number' ? missing : 0 }));
}

/** Train settings that fit a small table: more passes and a higher rate than an image net's. */
const TRAIN_PARAMS = { epochs: 30, batch_size: 32, lr: 0.005 };

/** The train node a target column calls for: a category is classified, a number regressed. */
export function trainTypeFor(target: TableColumn): 'train.Classifier' | 'train.Regressor' {
  return target.kind === 'category' ? 'train.Classifier' : 'train.Regressor';
}

/** The column the table node predicts: the one it names when that is a column, else the last. */
export function starterTarget(columns: readonly TableColumn[], chosen?: unknown): TableColumn | null {
  return columns.find((column) => column.name === chosen) ?? columns[columns.length - 1] ?? null;
}

/**
 * The starter graph for a table dataset, named after it and laid out left to right; null for
 * another input type, or a table that lists no columns (an older server): then the dataset's node
 * is placed alone, as before.
 */
export function tableStarterGraph(
  dataset: { name: string; node: DatasetNodeSpec; columns: readonly TableColumn[] },
  target?: string,
): GraphSpec | null {
  if (dataset.node.type !== TABLE_NODE_TYPE) return null;
  const chosen = starterTarget(dataset.columns, target ?? dataset.node.params.target);
  if (!chosen) return null;
  const inputs = dataset.columns.filter((column) => column !== chosen);
  const taken = new Set<string>();
  const node = (type: string, params: JsonObject, label?: string): GraphNodeSpec => {
    const id = nextNodeId(type, taken);
    taken.add(id);
    return { id, type, params, ...(label ? { label } : {}) };
  };
  const chain: GraphNodeSpec[] = [
    node(dataset.node.type, { ...dataset.node.params, target: chosen.name }, dataset.name.slice(0, 200)),
    ...preparationTypes(inputs).map((type) => node(type, {})),
    node('layer.Linear', { out_features: 64 }),
    node('layer.ReLU', {}),
    node('layer.Linear', { out_features: 'auto' }),
    node(trainTypeFor(chosen), { ...TRAIN_PARAMS }),
  ];
  const edges: GraphEdgeSpec[] = chain.slice(1).map((node, i) => ({ source: chain[i]!.id, target: node.id }));
  const positions = layeredLayout(chain, edges, { origin: { x: 40, y: 60 } });
  const nodes = chain.map((node) => ({ ...node, position: positions.get(node.id) ?? null }));
  return { version: 1, name: dataset.name, nodes, edges };
}
