// What a person reads for a searched param: "<node> · <param title>" (train · Learning rate), the
// title from the node catalog in the UI's language, in place of the `node.param` id the sweep API
// and the graph's search section use (the id stays a tooltip). A sweep's names come from the graph
// it swept (`base_graph`), the Sweep dialog's from the graph open in the editor.
import type { GraphNodeSpec, GraphSpec } from '../../api/types';
import type { CatalogIndex } from '../catalog/catalogIndex';
import { fieldFromSchema } from '../editor/logic/schemaForm';
import type { SweepDetail } from './api';

/** What the names need of a graph's node: its id, its type and its display name. */
export type NamedNode = Pick<GraphNodeSpec, 'id' | 'type' | 'label'>;

export interface ParamName {
  /** `node.param`, as the trials and the importance name it. */
  key: string;
  /** `node · Param title`. */
  label: string;
  /** The node's display name (else its id): an identifier, never translated. */
  node: string;
  /** The param's title in the catalog's language. */
  title: string;
}

/** A param's title in its node type's params schema (as the property form shows it); else its name. */
export function paramTitle(catalog: CatalogIndex, type: string | undefined, param: string): string {
  const schema = type === undefined ? undefined : catalog.byType.get(type)?.params_schema;
  const property = schema?.properties?.[param];
  if (!schema || !property) return param;
  return fieldFromSchema(param, property, schema, false).title || param;
}

/** `node · Param title` for `param` of node `nodeId` (the node's display name, else its id). */
export function paramLabel(
  nodeId: string,
  param: string,
  nodes: readonly NamedNode[] | null | undefined,
  catalog: CatalogIndex,
): string {
  const { node, title } = paramParts(nodeId, param, nodes, catalog);
  return `${node} · ${title}`;
}

function paramParts(
  nodeId: string,
  param: string,
  nodes: readonly NamedNode[] | null | undefined,
  catalog: CatalogIndex,
): { node: string; title: string } {
  const node = nodes?.find((candidate) => candidate.id === nodeId);
  return { node: node?.label || nodeId, title: paramTitle(catalog, node?.type, param) };
}

/** The params of a search section, in its order, each with its key and its label. */
export function searchedParams(
  search: Readonly<Record<string, Readonly<Record<string, unknown>>>> | null | undefined,
  nodes: readonly NamedNode[] | null | undefined,
  catalog: CatalogIndex,
): ParamName[] {
  return Object.entries(search ?? {}).flatMap(([nodeId, params]) =>
    Object.keys(params).map((param) => {
      const parts = paramParts(nodeId, param, nodes, catalog);
      return { key: `${nodeId}.${param}`, label: `${parts.node} · ${parts.title}`, ...parts };
    }),
  );
}

/** A sweep's searched params, named from the nodes of the graph it swept (valid as submitted; the
 * API types it as any JSON object). */
export function sweepParams(sweep: Pick<SweepDetail, 'search' | 'base_graph'>, catalog: CatalogIndex): ParamName[] {
  const graph = sweep.base_graph as Partial<Pick<GraphSpec, 'nodes'>>;
  return searchedParams(sweep.search, graph.nodes, catalog);
}

/** `node.param` -> its label, for the charts and the table; an unknown key is shown as it is. */
export function paramLabeller(names: readonly ParamName[]): (key: string) => string {
  const byKey = new Map(names.map((name) => [name.key, name.label]));
  return (key) => byKey.get(key) ?? key;
}
