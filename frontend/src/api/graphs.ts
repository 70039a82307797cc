// The graph requests: validation, templates, saved graphs with their versions, generated code.
// Each resource has one such module (api/catalog.ts, features/<resource>/api.ts); components call
// these functions, never the HTTP client.
import { api, ApiError, call } from './client';
import type { components } from './schema';
import type { GraphSpec, ValidationResult } from './types';

type Schemas = components['schemas'];
export type GraphSummary = Schemas['GraphPublic'];
export type GraphVersion = Schemas['GraphVersionPublic'];
export interface SavedGraph extends Omit<Schemas['GraphDetail'], 'graph'> {
  graph: GraphSpec;
}
export interface GraphTemplate {
  id: string;
  name: string;
  description: string;
  graph: GraphSpec;
}

const asGraph = (data: { [key: string]: unknown }) => data as unknown as GraphSpec;
const asBody = (graph: GraphSpec) => graph as unknown as { [key: string]: unknown };
const saved = (detail: Schemas['GraphDetail']): SavedGraph => ({ ...detail, graph: asGraph(detail.graph) });

export async function validateGraph(graph: GraphSpec, signal?: AbortSignal): Promise<ValidationResult> {
  const data = await call(() => api.POST('/api/graphs/validate', { body: asBody(graph), signal }));
  return data as unknown as ValidationResult;
}

/** The example graphs shipped with the server. */
export async function fetchTemplates(): Promise<GraphTemplate[]> {
  const data = await call(() => api.GET('/api/graphs/templates'));
  return data.map((template) => ({ ...template, graph: asGraph(template.graph) }));
}

export async function listGraphs(): Promise<GraphSummary[]> {
  const data = await call(() => api.GET('/api/graphs', { params: { query: { limit: 200 } } }));
  return data.data;
}

export async function getGraph(graphId: string): Promise<SavedGraph> {
  return saved(await call(() => api.GET('/api/graphs/{graph_id}', { params: { path: { graph_id: graphId } } })));
}

/** Save: a new graph when `graphId` is null, else a new version of that graph (and its name). */
export async function saveGraph(graphId: string | null, name: string, graph: GraphSpec): Promise<SavedGraph> {
  const body = { name: name.trim() || 'Untitled', graph: asBody(graph) };
  if (graphId === null) return saved(await call(() => api.POST('/api/graphs', { body })));
  return saved(
    await call(() => api.PATCH('/api/graphs/{graph_id}', { params: { path: { graph_id: graphId } }, body })),
  );
}

export async function listVersions(graphId: string): Promise<GraphVersion[]> {
  return call(() => api.GET('/api/graphs/{graph_id}/versions', { params: { path: { graph_id: graphId } } }));
}

export async function restoreVersion(graphId: string, version: number): Promise<SavedGraph> {
  return saved(
    await call(() =>
      api.POST('/api/graphs/{graph_id}/versions/{version}/restore', {
        params: { path: { graph_id: graphId, version } },
      }),
    ),
  );
}

/** The standalone PyTorch script of a graph as it is (the editor's open graph), saving nothing. */
export async function generateCode(graph: GraphSpec): Promise<{ filename: string; code: string }> {
  return call(() => api.POST('/api/graphs/code', { body: asBody(graph) }));
}

export { ApiError };
