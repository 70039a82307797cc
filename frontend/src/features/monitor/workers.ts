import type { TFunction } from 'i18next';

/** One process of a data-parallel run, as the trainer's start event lists it (`workers`). */
export interface Worker {
  rank: number;
  node_id: string;
  address: string;
  pid: number;
  device: string;
}

/** The start event, as the monitor's state keeps it (or nothing before it came). */
type Start = Record<string, unknown> | null | undefined;

const NODE_ID_CHARS = 8;

function isWorker(value: unknown): value is Worker {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Worker).rank === 'number' &&
    typeof (value as Worker).node_id === 'string' &&
    typeof (value as Worker).address === 'string' &&
    typeof (value as Worker).pid === 'number' &&
    typeof (value as Worker).device === 'string'
  );
}

/** The workers of a distributed run, by rank; null for a run in one process (no `workers`, or one). */
export function workersOf(start: Start): Worker[] | null {
  const value = start?.workers;
  if (!Array.isArray(value)) return null;
  const workers = value.filter(isWorker).sort((a, b) => a.rank - b.rank);
  return workers.length >= 2 ? workers : null;
}

/** "2 workers on 2 nodes", for the meta line; null for a run in one process. */
export function workersSummary(start: Start, t: TFunction): string | null {
  const workers = workersOf(start);
  if (!workers) return null;
  const nodes = new Set(workers.map((worker) => worker.node_id)).size;
  return t('monitor.workers.summary', {
    workers: t('monitor.workers.count', { count: workers.length }),
    nodes: t('monitor.workers.nodes', { count: nodes }),
  });
}

/** One line per worker, "rank 0: node 1a2b3c4d (10.0.0.5), pid 1234, cpu"; null for a run in one process. */
export function workersLine(start: Start, t: TFunction): string | null {
  const workers = workersOf(start);
  if (!workers) return null;
  return workers
    .map((worker) =>
      t('monitor.workers.line', {
        rank: worker.rank,
        node: worker.node_id.slice(0, NODE_ID_CHARS),
        address: worker.address,
        pid: worker.pid,
        device: worker.device,
      }),
    )
    .join('\n');
}
