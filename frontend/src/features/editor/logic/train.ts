// "Train" from the editor: the train node's settings, the epochs override, and the graph problems
// the server answers a refused submission with (422 {detail: {message, errors: [GraphError]}}).
// The train node itself is found through the catalog (catalog/taskKind.ts trainNodeOf).
import type { GraphError, GraphNodeSpec, GraphSpec, JsonSchema } from '../../../api/types';

/** Epochs the train node will run: its own value, else the schema's default, else null. */
export function epochsOf(train: GraphNodeSpec | null, schema: JsonSchema | undefined): number | null {
  const value = train?.params?.epochs;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  const fallback = schema?.properties?.epochs?.default;
  return typeof fallback === 'number' ? fallback : null;
}

/** Bounds of the epochs field, from the train node's schema (1..1000 in TrainConfig). */
export function epochsRange(schema: JsonSchema | undefined): { min: number; max: number } {
  const field = schema?.properties?.epochs;
  return { min: field?.minimum ?? 1, max: field?.maximum ?? 1000 };
}

/** The graph with the train node's epochs set; the same object when nothing changes. */
export function withEpochs(graph: GraphSpec, trainId: string | null, epochs: number): GraphSpec {
  const train = graph.nodes.find((node) => node.id === trainId);
  if (!train || train.params?.epochs === epochs) return graph;
  return {
    ...graph,
    nodes: graph.nodes.map((node) => (node === train ? { ...node, params: { ...node.params, epochs } } : node)),
  };
}

function isGraphError(value: unknown): value is GraphError {
  return (
    !!value &&
    typeof value === 'object' &&
    typeof (value as GraphError).code === 'string' &&
    typeof (value as GraphError).message === 'string'
  );
}

/** The graph problems in a refused submission's body; null when the body is not that. */
export function graphProblemsOf(body: unknown): GraphError[] | null {
  if (!body || typeof body !== 'object' || !('detail' in body)) return null;
  const detail = (body as { detail: unknown }).detail;
  if (!detail || typeof detail !== 'object' || Array.isArray(detail)) return null;
  const errors = (detail as { errors?: unknown }).errors;
  if (!Array.isArray(errors)) return null;
  return errors.filter(isGraphError).map((error) => ({
    code: error.code,
    message: error.message,
    node_id: error.node_id ?? null,
    field: error.field ?? null,
    details: error.details ?? {},
  }));
}

/** The first problem that names a node still on the canvas: the one to show the user. */
export function firstFailingNode(errors: readonly GraphError[], nodeIds: ReadonlySet<string>): string | null {
  return errors.find((error) => error.node_id && nodeIds.has(error.node_id))?.node_id ?? null;
}

const errorKey = (error: GraphError) => JSON.stringify([error.code, error.node_id, error.field, error.message]);

/** The live validation's problems plus those the server added on submission, each once. */
export function mergeErrors(live: readonly GraphError[], extra: readonly GraphError[]): GraphError[] {
  const seen = new Set(live.map(errorKey));
  return [...live, ...extra.filter((error) => !seen.has(errorKey(error)))];
}
