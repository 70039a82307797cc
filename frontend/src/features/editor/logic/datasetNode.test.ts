import { describe, expect, it } from 'vitest';
import type { GraphSpec } from '../../../api/types';
import { ENTRIES } from '../../../test/fixtures';
import { indexCatalog } from '../../catalog/catalogIndex';
import { asDatasetNode, fitsGraph, nameForDataset, withUploadedDataset } from './datasetNode';

const dataset = { id: 'ds_42', name: 'My digits' };

describe('use an uploaded dataset in the graph', () => {
  it('replaces the dataset node in place, keeping its connections', () => {
    const graph: GraphSpec = {
      version: 1,
      name: 'g',
      nodes: [
        { id: 'builtin-1', type: 'dataset.builtin', params: { name: 'mnist-5k' }, position: { x: 10, y: 20 } },
        { id: 'resize-1', type: 'op.Resize', params: {}, position: { x: 250, y: 20 } },
      ],
      edges: [
        {
          id: 'e-builtin-1-resize-1',
          source: 'builtin-1',
          target: 'resize-1',
          sourceHandle: 'out',
          targetHandle: 'in',
        },
      ],
    };
    const { graph: next, nodeId } = withUploadedDataset(graph, dataset);
    expect(nodeId).toBe('uploaded-1');
    expect(next.nodes[0]).toEqual({
      id: 'uploaded-1',
      type: 'dataset.uploaded',
      params: { dataset_id: 'ds_42' },
      label: 'My digits',
      position: { x: 10, y: 20 },
    });
    expect(next.nodes[1]).toBe(graph.nodes[1]);
    expect(next.edges).toEqual([
      { id: 'e-uploaded-1-resize-1', source: 'uploaded-1', target: 'resize-1', sourceHandle: null, targetHandle: 'in' },
    ]);
  });

  it('changes only the dataset of an uploaded-dataset node', () => {
    const graph: GraphSpec = {
      version: 1,
      name: 'g',
      nodes: [{ id: 'uploaded-1', type: 'dataset.uploaded', params: { dataset_id: 'old' }, position: { x: 0, y: 0 } }],
      edges: [],
    };
    const { graph: next, nodeId } = withUploadedDataset(graph, dataset);
    expect(nodeId).toBe('uploaded-1');
    expect(next.nodes[0]!.params).toEqual({ dataset_id: 'ds_42' });
  });

  it('adds one left of the graph when it has none, or to an empty graph', () => {
    const graph: GraphSpec = {
      version: 1,
      name: 'g',
      nodes: [{ id: 'conv2d-1', type: 'layer.Conv2d', params: {}, position: { x: 300, y: 80 } }],
      edges: [],
    };
    const { graph: next } = withUploadedDataset(graph, dataset);
    expect(next.nodes[0]).toMatchObject({ type: 'dataset.uploaded', position: { x: 70, y: 80 } });
    expect(next.nodes).toHaveLength(2);
    const empty = withUploadedDataset({ ...graph, nodes: [] }, dataset).graph;
    expect(empty.nodes).toEqual([
      {
        id: 'uploaded-1',
        type: 'dataset.uploaded',
        params: { dataset_id: 'ds_42' },
        label: 'My digits',
        position: { x: 40, y: 60 },
      },
    ]);
  });
});

describe('use an uploaded table in the graph', () => {
  const table = {
    id: 'ds_7',
    name: 'houses.csv',
    node: { type: 'dataset.table', params: { source: 'uploaded', dataset_id: 'ds_7' } },
  };

  it('puts the node the server names in place of the image dataset, connections kept', () => {
    const graph: GraphSpec = {
      version: 1,
      name: 'g',
      nodes: [
        { id: 'uploaded-1', type: 'dataset.uploaded', params: { dataset_id: 'ds_1' }, position: { x: 0, y: 0 } },
        { id: 'scale', type: 'op.Standardize', params: {} },
      ],
      edges: [{ source: 'uploaded-1', target: 'scale' }],
    };
    const { graph: next, nodeId } = withUploadedDataset(graph, table);
    expect(nodeId).toBe('table-1');
    expect(next.nodes[0]).toMatchObject({ id: 'table-1', type: 'dataset.table', params: table.node.params });
    expect(next.edges[0]).toMatchObject({ source: 'table-1', target: 'scale' });
  });

  it('reads the node spec only when it is one', () => {
    expect(asDatasetNode(table.node)).toEqual(table.node);
    expect(asDatasetNode({ type: 'layer.Linear', params: {} })).toBeUndefined();
    expect(asDatasetNode({ type: 'dataset.table', params: [] })).toBeUndefined();
    expect(asDatasetNode(null)).toBeUndefined();
  });
});

describe('a dataset of another port type', () => {
  const catalog = indexCatalog([
    ...ENTRIES,
    { ...ENTRIES[0]!, type: 'dataset.uploaded', title: 'Uploaded dataset' },
    {
      ...ENTRIES[0]!,
      type: 'dataset.table',
      title: 'Table',
      outputs: [{ name: 'out', types: ['table'], multiple: false, label: 'table' }],
    },
  ]);
  const cnn: GraphSpec = {
    version: 1,
    name: 'CNN',
    nodes: [
      { id: 'data', type: 'dataset.builtin', params: { name: 'digits' } },
      { id: 'resize', type: 'op.Resize', params: {} },
    ],
    edges: [{ source: 'data', target: 'resize' }],
  };

  it('does not fit an image graph (a table opens a new graph), while uploaded images do', () => {
    expect(fitsGraph(cnn, 'dataset.table', catalog)).toBe(false);
    expect(fitsGraph(cnn, 'dataset.uploaded', catalog)).toBe(true);
    expect(fitsGraph({ ...cnn, nodes: [], edges: [] }, 'dataset.table', catalog)).toBe(true);
  });
});

describe('the name of a template that takes another dataset', () => {
  it('names the new dataset where the template named its own', () => {
    // A penguin model trained from the breast-cancer template was called "MLP (breast cancer)".
    expect(nameForDataset('MLP (breast cancer)', 'penguins')).toBe('MLP (penguins)');
    expect(nameForDataset('多层感知机（乳腺癌）', '企鹅')).toBe('多层感知机（企鹅）');
    expect(nameForDataset('LSTM classifier (sequential MNIST)', 'Sensors')).toBe('LSTM classifier (Sensors)');
  });

  it('leaves a name that names no dataset as it is', () => {
    expect(nameForDataset('My network', 'penguins')).toBe('My network');
    expect(nameForDataset('(draft)', 'penguins')).toBe('(draft)');
  });
});
