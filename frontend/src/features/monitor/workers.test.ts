import { describe, expect, it } from 'vitest';
import { t, zh } from './testI18n';
import { workersLine, workersOf, workersSummary } from './workers';

const worker = (rank: number, node_id: string, address: string, pid: number) => ({
  rank,
  node_id,
  address,
  pid,
  device: 'cpu',
});
// Listed out of order, as the event may: the monitor shows them by rank.
const twoNodes = {
  device: 'cpu',
  workers: [
    worker(1, '9f8e7d6c5b4a39281706f5e4d3c2b1a0', '10.0.0.6', 5678),
    worker(0, '1a2b3c4d5e6f708192a3b4c5d6e7f809', '10.0.0.5', 1234),
  ],
};
const oneNode = {
  workers: [0, 1, 2, 3].map((rank) => worker(rank, '1a2b3c4d5e6f708192a3b4c5d6e7f809', '10.0.0.5', 1000 + rank)),
};

describe('workers summary', () => {
  it('counts the workers and their distinct nodes, in both languages', () => {
    expect(workersSummary(twoNodes, t)).toBe('2 workers on 2 nodes');
    expect(workersSummary(oneNode, t)).toBe('4 workers on 1 node');
    expect(workersSummary(twoNodes, zh)).toBe('2 个训练进程，分布在 2 个节点上');
    expect(workersSummary(oneNode, zh)).toBe('4 个训练进程，分布在 1 个节点上');
  });

  it('shows nothing for a run in one process', () => {
    expect(workersSummary(null, t)).toBeNull();
    expect(workersSummary(undefined, t)).toBeNull();
    expect(workersSummary({ device: 'cpu' }, t)).toBeNull();
    expect(workersSummary({ workers: null }, t)).toBeNull();
    expect(workersSummary({ workers: [twoNodes.workers[0]] }, t)).toBeNull();
  });
});

describe('workers line', () => {
  it('lists each worker by rank, with the short node id', () => {
    expect(workersLine(twoNodes, t)).toBe(
      'rank 0: node 1a2b3c4d (10.0.0.5), pid 1234, cpu\nrank 1: node 9f8e7d6c (10.0.0.6), pid 5678, cpu',
    );
    expect(workersLine(twoNodes, zh)).toBe(
      '第 0 号训练进程：节点 1a2b3c4d（10.0.0.5），PID 1234，cpu\n第 1 号训练进程：节点 9f8e7d6c（10.0.0.6），PID 5678，cpu',
    );
  });

  it('leaves out what is not a worker, and single-process runs', () => {
    expect(workersOf({ workers: [...twoNodes.workers, { rank: 2 }, 'x', null] })).toHaveLength(2);
    expect(workersLine({ workers: [twoNodes.workers[0], { rank: 1, node_id: 7 }] }, t)).toBeNull();
    expect(workersLine({ workers: 'two' }, t)).toBeNull();
    expect(workersLine(null, t)).toBeNull();
  });

  it('does not reorder the event it was given', () => {
    workersOf(twoNodes);
    expect(twoNodes.workers[0]?.rank).toBe(1);
  });
});
