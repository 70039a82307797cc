// The sweep requests of the sweeps pages and the editor's Sweep dialog, typed by the generated schema.
import { api, call } from '../../api/client';
import type { components } from '../../api/schema';
import type { GraphSpec } from '../../api/types';

type Schemas = components['schemas'];
export type SweepSummary = Schemas['SweepSummary'];
export type SweepDetail = Schemas['SweepDetail'];
export type Trial = Schemas['TrialPublic'];
export type SweepCreate = Omit<Schemas['SweepCreate'], 'graph' | 'resources'>;
export type SamplerName = SweepSummary['sampler'];
export type PrunerName = SweepSummary['pruner'];

const sweepPath = (sweepId: string) => ({ params: { path: { sweep_id: sweepId } } });

export function listSweeps(offset = 0, limit = 50): Promise<{ data: SweepSummary[]; count: number }> {
  return call(() => api.GET('/api/sweeps', { params: { query: { offset, limit } } }));
}

export function getSweep(sweepId: string): Promise<SweepDetail> {
  return call(() => api.GET('/api/sweeps/{sweep_id}', sweepPath(sweepId)));
}

/** Start a sweep of a saved graph (`graph_id`) or of the graph JSON itself (with its search section).
 * A graph or search section that does not validate is refused with 422 and its problems. */
export function createSweep(
  source: { graph_id: string } | { graph: GraphSpec },
  options: Omit<SweepCreate, 'graph_id'>,
): Promise<SweepDetail> {
  const graph = 'graph' in source ? { graph: source.graph as unknown as { [key: string]: unknown } } : source;
  return call(() => api.POST('/api/sweeps', { body: { ...options, ...graph } }));
}

export function stopSweep(sweepId: string): Promise<SweepDetail> {
  return call(() => api.POST('/api/sweeps/{sweep_id}/stop', sweepPath(sweepId)));
}

export function resumeSweep(sweepId: string): Promise<SweepDetail> {
  return call(() => api.POST('/api/sweeps/{sweep_id}/resume', sweepPath(sweepId)));
}

/** The graph with the best trial's values and no search section. */
export async function bestGraph(sweepId: string): Promise<GraphSpec> {
  const graph = await call(() => api.GET('/api/sweeps/{sweep_id}/best-graph', sweepPath(sweepId)));
  return graph as unknown as GraphSpec;
}

/** Name the best trial's model `name` (worded in the reader's language) and record it as the
 * sweep's best (`best_model_id`). */
export function registerBest(sweepId: string, name: string): Promise<Schemas['SweepBestModel']> {
  return call(() => api.POST('/api/sweeps/{sweep_id}/register-best', { ...sweepPath(sweepId), body: { name } }));
}
