import { describe, expect, it } from 'vitest';
import type { GraphSpec } from '../../../api/types';
import { CATALOG } from '../../../test/fixtures';
import { flowToGraph, graphToFlow, parseGraphJson, snapshotOf, validationKey } from './convert';

const GRAPH: GraphSpec = {
  version: 1,
  name: 'Tiny',
  description: 'two nodes',
  nodes: [
    { id: 'data', type: 'dataset.builtin', params: { name: 'digits' }, position: { x: 0, y: 0 } },
    {
      id: 'conv',
      type: 'layer.Conv2d',
      params: { out_channels: 8 },
      position: { x: 250.4, y: 10 },
      label: 'First conv',
    },
  ],
  edges: [{ source: 'data', target: 'conv' }],
};

describe('the search section', () => {
  it('goes onto its nodes and back into the graph file, and counts for validation', () => {
    const search = { conv: { out_channels: { type: 'choice' as const, values: [8, 16] } } };
    const { nodes, edges, meta } = graphToFlow({ ...GRAPH, search }, CATALOG);
    expect(nodes[1]!.data.search).toEqual(search.conv);
    expect(nodes[0]!.data.search).toBeUndefined();
    const back = flowToGraph(nodes, edges, meta);
    expect(back.search).toEqual(search);
    expect(validationKey(back)).not.toBe(validationKey({ ...back, search: undefined }));
    expect('search' in flowToGraph(graphToFlow(GRAPH, CATALOG).nodes, edges, meta)).toBe(false);
  });

  it('survives an imported file', () => {
    const parsed = parseGraphJson(
      JSON.stringify({ ...GRAPH, search: { conv: { out_channels: { type: 'int', low: 4, high: 8 } } } }),
    );
    expect(parsed.ok && parsed.graph.search).toEqual({ conv: { out_channels: { type: 'int', low: 4, high: 8 } } });
  });
});

describe('graphToFlow', () => {
  it('makes one React Flow node per graph node, typed by its catalog category', () => {
    const { nodes, meta } = graphToFlow(GRAPH, CATALOG);
    expect(nodes.map((n) => [n.id, n.type])).toEqual([
      ['data', 'dataset'],
      ['conv', 'layer'],
    ]);
    expect(nodes[1]!.data).toEqual({ kind: 'layer.Conv2d', params: { out_channels: 8 }, label: 'First conv' });
    expect(meta).toEqual({ name: 'Tiny', description: 'two nodes' });
  });

  it('names the default ports of edges that omit their handles', () => {
    const { edges } = graphToFlow(GRAPH, CATALOG);
    expect(edges).toEqual([
      { id: 'e-data-conv', type: 'shape', source: 'data', target: 'conv', sourceHandle: 'out', targetHandle: 'in' },
    ]);
  });

  it('keeps unknown node types as "unknown" nodes instead of dropping them', () => {
    const graph = {
      ...GRAPH,
      nodes: [{ id: 'x', type: 'layer.Nope', params: {}, position: { x: 1, y: 2 } }],
      edges: [],
    };
    expect(graphToFlow(graph, CATALOG).nodes[0]!.type).toBe('unknown');
  });

  it('lays out nodes that have no position', () => {
    const graph: GraphSpec = {
      ...GRAPH,
      nodes: GRAPH.nodes.map(({ position: _p, ...node }) => node),
    };
    const { nodes } = graphToFlow(graph, CATALOG);
    expect(nodes[1]!.position.x).toBeGreaterThan(nodes[0]!.position.x);
  });

  it('gives repeated edges distinct ids', () => {
    const graph = { ...GRAPH, edges: [...GRAPH.edges, ...GRAPH.edges] };
    const ids = graphToFlow(graph, CATALOG).edges.map((e) => e.id);
    expect(new Set(ids).size).toBe(2);
  });
});

describe('flowToGraph', () => {
  it('round-trips a graph, rounding positions and keeping edge order', () => {
    const flow = graphToFlow(GRAPH, CATALOG);
    const back = flowToGraph(flow.nodes, flow.edges, flow.meta);
    expect(back.nodes[1]).toEqual({
      id: 'conv',
      type: 'layer.Conv2d',
      params: { out_channels: 8 },
      position: { x: 250, y: 10 },
      label: 'First conv',
    });
    expect(back.edges).toEqual([
      { id: 'e-data-conv', source: 'data', target: 'conv', sourceHandle: 'out', targetHandle: 'in' },
    ]);
    expect(graphToFlow(back, CATALOG).nodes).toEqual(graphToFlow(back, CATALOG).nodes);
  });
});

describe('validationKey', () => {
  it('ignores positions and names but not params or edges', () => {
    const moved = { ...GRAPH, name: 'Other', nodes: GRAPH.nodes.map((n) => ({ ...n, position: { x: 99, y: 99 } })) };
    expect(validationKey(moved)).toBe(validationKey(GRAPH));
    const changed = { ...GRAPH, nodes: [GRAPH.nodes[0]!, { ...GRAPH.nodes[1]!, params: { out_channels: 9 } }] };
    expect(validationKey(changed)).not.toBe(validationKey(GRAPH));
    expect(validationKey({ ...GRAPH, edges: [] })).not.toBe(validationKey(GRAPH));
  });
});

describe('snapshotOf', () => {
  it('drops selection and measurements, which undo must not restore', () => {
    const { nodes, edges } = graphToFlow(GRAPH, CATALOG);
    const busy = nodes.map((n) => ({ ...n, selected: true, measured: { width: 10, height: 10 } }));
    expect(snapshotOf(busy, edges)).toEqual(snapshotOf(nodes, edges));
  });
});

describe('parseGraphJson', () => {
  it('accepts a graph file', () => {
    const parsed = parseGraphJson(JSON.stringify(GRAPH));
    expect(parsed.ok && parsed.graph.nodes).toHaveLength(2);
  });

  it('says why a file is not a graph', () => {
    expect(parseGraphJson('{nope')).toEqual({ ok: false, reason: 'notJson' });
    expect(parseGraphJson('{"name": "x"}')).toEqual({ ok: false, reason: 'noNodes' });
    expect(parseGraphJson('[1]')).toEqual({ ok: false, reason: 'noNodes' });
    expect(parseGraphJson('{"version": 2, "nodes": []}')).toEqual({ ok: false, reason: 'badVersion', version: '2' });
  });
});
