import { describe, expect, it } from 'vitest';
import type { CatalogEntry, GraphError, PortSpec } from '../../../api/types';
import { indexCatalog } from '../../catalog/catalogIndex';
import { ENTRIES, TASK_KINDS } from '../../../test/fixtures';
import { makeNode } from './convert';
import { edgeUnder, insertIntoEdge } from './insertNode';
import { applyPreparation, preparationFor, stepList, targetChoices } from './tablePrep';
import type { EditorEdge } from './types';

const port = (name: string, types: string[]): PortSpec => ({ name, types, multiple: false, label: name });
const tableOp = (type: string, title: string): CatalogEntry => ({
  type,
  category: 'op',
  title,
  description: '',
  inputs: [port('in', ['table'])],
  outputs: [port('out', ['table'])],
  random: false,
  params_schema: { type: 'object', properties: { columns: { type: 'array', items: { type: 'string' } } } },
});
// The real catalog's shapes: a Linear takes every input type, table operators only tables.
const TABLE_CATALOG = indexCatalog(
  [
    ...ENTRIES,
    {
      type: 'dataset.table',
      category: 'dataset',
      title: 'Table',
      description: '',
      inputs: [],
      outputs: [port('out', ['table'])],
      random: false,
      params_schema: { type: 'object', properties: { target: { type: 'string' } } },
    },
    tableOp('op.Impute', 'Fill missing values'),
    tableOp('op.Standardize', 'Standardize'),
    tableOp('op.OneHot', 'One-hot'),
    {
      type: 'layer.Linear',
      category: 'layer',
      title: 'Linear',
      description: '',
      inputs: [port('in', ['images', 'table', 'sequence', 'tensor'])],
      outputs: [port('out', ['tensor'])],
      random: false,
      params_schema: { type: 'object', properties: {} },
    },
  ],
  TASK_KINDS,
);

const at = (x: number, y: number) => ({ x, y });
const node = (id: string, kind: string, x: number, y = 0) => makeNode(id, kind, {}, at(x, y), TABLE_CATALOG);
const edge = (source: string, target: string): EditorEdge => ({
  id: `e-${source}-${target}`,
  type: 'shape',
  source,
  target,
  sourceHandle: 'out',
  targetHandle: 'in',
});
const tableGraph = () => ({
  nodes: [
    node('table', 'dataset.table', 0),
    node('linear', 'layer.Linear', 600),
    node('train', 'train.Classifier', 900),
  ],
  edges: [edge('table', 'linear'), edge('linear', 'train')],
});
const error = (code: string, node_id: string | null): GraphError => ({
  code,
  message: '',
  node_id,
  field: null,
  details: {},
});
const chain = (edges: readonly EditorEdge[], from: string) => {
  const order = [from];
  for (let next = edges.find((e) => e.source === from); next; next = edges.find((e) => e.source === next!.target))
    order.push(next.target);
  return order;
};

describe('targetChoices', () => {
  it('lists the input columns and the target, keeping a stored value validation did not confirm', () => {
    const dataset = {
      classes: [],
      count: 10,
      channels: 0,
      size: null,
      target: 'species',
      columns: [
        { name: 'bill_length_mm', kind: 'number' as const, missing: 2, categories: [] },
        { name: 'island', kind: 'category' as const, missing: 0, categories: ['Biscoe'] },
      ],
    };
    expect(targetChoices(dataset, undefined)).toEqual(['bill_length_mm', 'island', 'species']);
    expect(targetChoices(dataset, 'body_mass_g')).toEqual(['bill_length_mm', 'island', 'species', 'body_mass_g']);
    expect(targetChoices(null, 'x')).toEqual([]);
  });
});

describe('table preparation', () => {
  it('inserts Fill missing values, Standardize and One-hot between the table and the first layer', () => {
    const { nodes, edges } = tableGraph();
    const errors = [error('text_feature', 'linear'), error('missing_values', 'linear'), error('output_mismatch', null)];
    const preparation = preparationFor(errors, nodes, edges, TABLE_CATALOG);
    expect(preparation).toEqual({ nodeId: 'linear', types: ['op.Impute', 'op.Standardize', 'op.OneHot'] });
    const result = applyPreparation(preparation!, nodes, edges, TABLE_CATALOG)!;
    const kinds = chain(result.edges, 'table').map((id) => result.nodes.find((n) => n.id === id)!.data.kind);
    expect(kinds).toEqual([
      'dataset.table',
      'op.Impute',
      'op.Standardize',
      'op.OneHot',
      'layer.Linear',
      'train.Classifier',
    ]);
    // Spread along the old edge, left to right.
    const xs = result.added.map((id) => result.nodes.find((n) => n.id === id)!.position.x);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(xs[0]).toBeGreaterThan(0);
    expect(xs[2]).toBeLessThan(600);
  });

  it('asks only for what is missing and leaves out operators the chain has', () => {
    const { nodes, edges } = tableGraph();
    nodes.push(node('std', 'op.Standardize', 300));
    const withStd = insertIntoEdge(['std'], edges[0]!, nodes, edges, TABLE_CATALOG)!;
    expect(preparationFor([error('text_feature', 'linear')], nodes, withStd, TABLE_CATALOG)).toEqual({
      nodeId: 'linear',
      types: ['op.OneHot'],
    });
    expect(preparationFor([error('output_mismatch', 'linear')], nodes, withStd, TABLE_CATALOG)).toBeNull();
  });

  it('offers all the table needs in one click, though validation names its first problem only', () => {
    // Validation stops at the first column that cannot reach a layer (text here); the table's
    // summary says another column has missing values, so one click inserts both fixes.
    const { nodes, edges } = tableGraph();
    nodes.push(node('std', 'op.Standardize', 300));
    const withStd = insertIntoEdge(['std'], edges[0]!, nodes, edges, TABLE_CATALOG)!;
    const dataset = {
      classes: [],
      count: 10,
      channels: 0,
      size: null,
      target: 'species',
      columns: [
        { name: 'island', kind: 'category' as const, missing: 0, categories: ['Biscoe'] },
        { name: 'bill_length_mm', kind: 'number' as const, missing: 2, categories: [] },
      ],
    };
    expect(preparationFor([error('text_feature', 'linear')], nodes, withStd, TABLE_CATALOG, dataset)).toEqual({
      nodeId: 'linear',
      types: ['op.Impute', 'op.OneHot'],
    });
    // A table with no missing value gets One-hot alone.
    const complete = { ...dataset, columns: dataset.columns.map((column) => ({ ...column, missing: 0 })) };
    expect(preparationFor([error('text_feature', 'linear')], nodes, withStd, TABLE_CATALOG, complete)).toEqual({
      nodeId: 'linear',
      types: ['op.OneHot'],
    });
    // No preparation error, no offer, whatever the table holds.
    expect(preparationFor([], nodes, withStd, TABLE_CATALOG, dataset)).toBeNull();
  });
});

describe('a node dropped on an edge', () => {
  it('finds the edge under the node and splits it when both port types fit', () => {
    const { nodes, edges } = tableGraph();
    nodes.push(node('impute', 'op.Impute', 210, 0));
    const box = { x: 210, y: 0, width: 180, height: 110 };
    const under = edgeUnder(box, 'impute', nodes, edges);
    expect(under?.id).toBe('e-table-linear');
    const split = insertIntoEdge(['impute'], under!, nodes, edges, TABLE_CATALOG)!;
    expect(chain(split, 'table')).toEqual(['table', 'impute', 'linear', 'train']);
    expect(split).toHaveLength(3);
  });

  it('leaves an edge whose types refuse the node, and a node beside the edges', () => {
    const { nodes, edges } = tableGraph();
    nodes.push(node('impute', 'op.Impute', 700, 0), node('resize', 'op.Resize', 200, 0));
    // A table operator between a Linear and the train node: tensor in, table expected.
    const under = edgeUnder({ x: 750, y: 0, width: 180, height: 110 }, 'impute', nodes, edges);
    expect(under?.id).toBe('e-linear-train');
    expect(insertIntoEdge(['impute'], under!, nodes, edges, TABLE_CATALOG)).toBeNull();
    // An image operator on a table edge.
    expect(insertIntoEdge(['resize'], edges[0]!, nodes, edges, TABLE_CATALOG)).toBeNull();
    expect(edgeUnder({ x: 200, y: 400, width: 180, height: 110 }, 'impute', nodes, edges)).toBeNull();
  });
});

describe('stepList', () => {
  it('lists the inserted operators as each language writes a list', () => {
    expect(stepList(['Fill missing values', 'One-hot'], 'en')).toBe('Fill missing values and One-hot');
    expect(stepList(['填充缺失值', '独热编码'], 'zh')).toBe('填充缺失值和独热编码');
    expect(stepList(['A', 'B', 'C'], 'en')).toBe('A, B, and C');
  });
});
