// Table preparation offered where validation asks for it, and the Table node's target choices.
import type { DatasetSummary, GraphError } from '../../../api/types';
import type { CatalogIndex } from '../../catalog/catalogIndex';
import { nextNodeId } from './clipboard';
import { makeNode } from './convert';
import { insertIntoEdge } from './insertNode';
import { defaultParams } from './schemaForm';
import type { EditorEdge, EditorNode } from './types';

export const TABLE_TYPE = 'dataset.table';

/**
 * The columns a Table node's target can be chosen from: the input columns validation read plus
 * the target itself, in that order; a chosen target validation did not confirm is kept, so the
 * select never hides the stored value. Empty when validation read no table.
 */
export function targetChoices(dataset: DatasetSummary | null | undefined, current: unknown): string[] {
  if (!dataset?.columns) return [];
  const names = dataset.columns.map((column) => column.name);
  if (dataset.target && !names.includes(dataset.target)) names.push(dataset.target);
  if (typeof current === 'string' && current && !names.includes(current)) names.push(current);
  return names;
}

/** The titles of the operators a preparation inserts, as a list in the reader's language:
 * 'Fill missing values and One-hot', '填充缺失值和独热编码' (a comma list read as English in Chinese). */
export function stepList(titles: readonly string[], language: string): string {
  return new Intl.ListFormat(language === 'zh' ? 'zh-CN' : 'en', { type: 'conjunction' }).format(titles);
}

/** The operators, in pipeline order, each preparing what an error code asks for. */
const PREPARATION: { type: string; code: string | null }[] = [
  { type: 'op.Impute', code: 'missing_values' },
  // Standardize before One-hot: it scales the number columns only, not the 0/1 columns.
  { type: 'op.Standardize', code: null },
  { type: 'op.OneHot', code: 'text_feature' },
];
const PREPARATION_CODES = new Set(PREPARATION.map((step) => step.code).filter(Boolean));

export interface Preparation {
  /** The node the table reaches unprepared (the first layer). */
  nodeId: string;
  /** The operator types to insert before it, in order. */
  types: string[];
}

/** The node types upstream of `nodeId`, along its first inputs. */
function upstreamKinds(nodeId: string, nodes: readonly EditorNode[], edges: readonly EditorEdge[]): Set<string> {
  const kinds = new Set<string>();
  const seen = new Set<string>();
  let current: string | undefined = nodeId;
  while (current && !seen.has(current)) {
    seen.add(current);
    const into = edges.find((edge) => edge.target === current);
    current = into?.source;
    const node = nodes.find((n) => n.id === current);
    if (node) kinds.add(node.data.kind);
  }
  return kinds;
}

/** The preparation codes the table's columns call for: validation names only its first problem. */
function tableNeeds(dataset: DatasetSummary | null | undefined): string[] {
  return columnNeeds(dataset?.columns ?? []);
}

type ColumnFacts = Pick<NonNullable<DatasetSummary['columns']>[number], 'kind' | 'missing'>;

function columnNeeds(columns: readonly ColumnFacts[]): string[] {
  return [
    ...(columns.some((column) => column.missing > 0) ? ['missing_values'] : []),
    ...(columns.some((column) => column.kind !== 'number') ? ['text_feature'] : []),
  ];
}

/**
 * The operators a table's input columns need before a first layer, in pipeline order (what the
 * Prepare button would insert once validation asked): Standardize always, Fill missing values
 * and One-hot where a column has missing values or text.
 */
export function preparationTypes(inputColumns: readonly ColumnFacts[]): string[] {
  const codes = new Set(columnNeeds(inputColumns));
  return PREPARATION.filter((step) => step.code === null || codes.has(step.code)).map((step) => step.type);
}

/**
 * What to insert for the preparation errors (text columns, missing values) on the first layer:
 * Fill missing values for missing values, One-hot for text columns, and Standardize with them,
 * leaving out any operator the chain already has. Validation stops at the first such column, so
 * the table's summary (`dataset`) adds what its other columns need: one click prepares it all.
 * Null when no such error is in `errors`.
 */
export function preparationFor(
  errors: readonly GraphError[],
  nodes: readonly EditorNode[],
  edges: readonly EditorEdge[],
  catalog: CatalogIndex,
  dataset?: DatasetSummary | null,
): Preparation | null {
  const asked = errors.filter((error) => error.node_id && PREPARATION_CODES.has(error.code));
  const nodeId = asked[0]?.node_id;
  if (!nodeId) return null;
  const codes = new Set([
    ...asked.filter((error) => error.node_id === nodeId).map((error) => error.code),
    ...tableNeeds(dataset),
  ]);
  const present = upstreamKinds(nodeId, nodes, edges);
  const types = PREPARATION.filter((step) => step.code === null || codes.has(step.code))
    .map((step) => step.type)
    .filter((type) => !present.has(type) && catalog.byType.has(type));
  return types.length ? { nodeId, types } : null;
}

/**
 * The nodes and edges with `preparation` inserted into the edge reaching its node, the new nodes
 * spread along that edge (the page lays the graph out after). Null when no edge reaches the node
 * or a port type refuses the chain.
 */
export function applyPreparation(
  preparation: Preparation,
  nodes: readonly EditorNode[],
  edges: readonly EditorEdge[],
  catalog: CatalogIndex,
): { nodes: EditorNode[]; edges: EditorEdge[]; added: string[] } | null {
  const edge = edges.find((e) => e.target === preparation.nodeId);
  const source = nodes.find((node) => node.id === edge?.source);
  const target = nodes.find((node) => node.id === preparation.nodeId);
  if (!edge || !source || !target) return null;
  const taken = new Set(nodes.map((node) => node.id));
  const count = preparation.types.length;
  const added = preparation.types.map((type, i) => {
    const id = nextNodeId(type, taken);
    taken.add(id);
    const share = (i + 1) / (count + 1);
    const position = {
      x: source.position.x + (target.position.x - source.position.x) * share,
      y: source.position.y + (target.position.y - source.position.y) * share,
    };
    const schema = catalog.byType.get(type)?.params_schema ?? {};
    return makeNode(id, type, defaultParams(schema), position, catalog);
  });
  const allNodes = [...nodes.map((node) => (node.selected ? { ...node, selected: false } : node)), ...added];
  const nextEdges = insertIntoEdge(
    added.map((node) => node.id),
    edge,
    allNodes,
    edges,
    catalog,
  );
  if (!nextEdges) return null;
  return { nodes: allNodes, edges: nextEdges, added: added.map((node) => node.id) };
}
