import { describe, expect, it } from 'vitest';
import { opensStarter } from '../../datasets/openInEditor';
import type { CatalogEntry } from '../../../api/types';
import { indexCatalog } from '../../catalog/catalogIndex';
import { asColumns, starterTarget, tableGoesIntoGraph, tableStarterGraph, type TableColumn } from './tableStarter';

// The review's table: text columns, "NA" cells (missing), a numeric target last.
const COLUMNS: TableColumn[] = [
  { name: 'species', kind: 'category', missing: 0 },
  { name: 'island', kind: 'category', missing: 0 },
  { name: 'bill_length_mm', kind: 'number', missing: 2 },
  { name: 'sex', kind: 'category', missing: 11 },
  { name: 'body_mass_g', kind: 'number', missing: 2 },
];
const penguins = (columns: TableColumn[] = COLUMNS) => ({
  name: 'penguins',
  node: { type: 'dataset.table', params: { dataset_id: 'ds1' } },
  columns,
});
const trainEntry = (type: string): CatalogEntry => ({
  type,
  category: 'train',
  title: type,
  description: '',
  inputs: [],
  outputs: [],
  random: false,
  params_schema: {},
});
const catalog = indexCatalog([trainEntry('train.Classifier'), trainEntry('train.Regressor')]);
const chainOf = (graph: NonNullable<ReturnType<typeof tableStarterGraph>>) => {
  const types: string[] = [];
  let id: string | undefined = graph.nodes.find((node) => !graph.edges.some((edge) => edge.target === node.id))?.id;
  while (id) {
    types.push(graph.nodes.find((node) => node.id === id)!.type);
    id = graph.edges.find((edge) => edge.source === id)?.target;
  }
  return types;
};

describe('a starter graph for an uploaded table', () => {
  it('prepares the table, adds a small network and regresses a numeric last column', () => {
    const graph = tableStarterGraph(penguins())!;
    expect(graph.name).toBe('penguins');
    expect(chainOf(graph)).toEqual([
      'dataset.table',
      'op.Impute',
      'op.Standardize',
      'op.OneHot',
      'layer.Linear',
      'layer.ReLU',
      'layer.Linear',
      'train.Regressor',
    ]);
    expect(graph.edges).toHaveLength(graph.nodes.length - 1);
    const data = graph.nodes[0]!;
    expect(data).toMatchObject({ label: 'penguins', params: { dataset_id: 'ds1', target: 'body_mass_g' } });
    const linears = graph.nodes.filter((node) => node.type === 'layer.Linear').map((node) => node.params);
    expect(linears).toEqual([{ out_features: 64 }, { out_features: 'auto' }]);
    // Left to right, one row.
    const xs = graph.nodes.map((node) => node.position!.x);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(new Set(xs).size).toBe(xs.length);
    expect(new Set(graph.nodes.map((node) => node.position!.y)).size).toBe(1);
    expect(new Set(graph.nodes.map((node) => node.id)).size).toBe(graph.nodes.length);
  });

  it('classifies a category target, and prepares only what the input columns need', () => {
    const graph = tableStarterGraph(penguins(), 'species')!;
    expect(graph.nodes[0]!.params).toMatchObject({ target: 'species' });
    expect(chainOf(graph).at(-1)).toBe('train.Classifier');
    // Numbers only, nothing missing among the inputs (the target's own gaps are dropped rows).
    const numbers = tableStarterGraph(
      penguins([
        { name: 'a', kind: 'number', missing: 0 },
        { name: 'b', kind: 'number', missing: 0 },
        { name: 'label', kind: 'category', missing: 3 },
      ]),
    )!;
    expect(chainOf(numbers)).toEqual([
      'dataset.table',
      'op.Standardize',
      'layer.Linear',
      'layer.ReLU',
      'layer.Linear',
      'train.Classifier',
    ]);
  });

  it("keeps a target the node already names, and needs the table's columns", () => {
    expect(starterTarget(COLUMNS, 'island')?.name).toBe('island');
    expect(starterTarget(COLUMNS, 'not a column')?.name).toBe('body_mass_g');
    expect(tableStarterGraph(penguins([]))).toBeNull();
  });

  it('opens for a table that lists its columns, never for images or sequences', () => {
    expect(opensStarter(penguins(), null, catalog)).toBe(true);
    expect(opensStarter({ node: { type: 'dataset.uploaded', params: { dataset_id: 'x' } } }, null, catalog)).toBe(
      false,
    );
    expect(opensStarter({ node: { type: 'dataset.table', params: {} }, columns: [] }, null, catalog)).toBe(false);
    expect(tableStarterGraph({ ...penguins(), node: { type: 'dataset.sequences', params: {} } })).toBeNull();
  });

  it('swaps the table into an open table graph that trains, and starts afresh from anything else', () => {
    const template = tableStarterGraph(penguins())!;
    expect(tableGoesIntoGraph(template, catalog)).toBe(true);
    expect(opensStarter(penguins(), template, catalog)).toBe(false);
    // A lone table node (what "Use in editor" left before), an image graph, nothing open.
    const lone = { nodes: template.nodes.slice(0, 1) };
    const images = {
      nodes: [
        { id: 'd', type: 'dataset.uploaded' },
        { id: 't', type: 'train.Classifier' },
      ],
    };
    for (const graph of [lone, images, null]) expect(opensStarter(penguins(), graph, catalog)).toBe(true);
  });

  it('reads the columns back from storage, or nothing from anything else', () => {
    const stored = JSON.parse(JSON.stringify([...COLUMNS, { name: 'x', kind: 'number' }])) as unknown;
    expect(asColumns(stored)).toEqual([...COLUMNS, { name: 'x', kind: 'number', missing: 0 }]);
    expect(asColumns([{ name: 'x', kind: 'date' }])).toBeUndefined();
    expect(asColumns(null)).toBeUndefined();
  });
});
