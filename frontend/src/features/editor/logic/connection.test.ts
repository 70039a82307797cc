import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../../test/fixtures';
import type { CatalogEntry, PortSpec } from '../../../api/types';
import { indexCatalog } from '../../catalog/catalogIndex';
import { checkConnection, reaches } from './connection';

const node = (id: string, kind: string, label?: string) => ({ id, data: { kind, ...(label ? { label } : {}) } });
const NODES = [
  node('data', 'dataset.builtin'),
  node('resize', 'op.Resize'),
  node('conv', 'layer.Conv2d'),
  node('relu', 'layer.ReLU'),
  node('add', 'layer.Add'),
  node('train', 'train.Classifier'),
];
const edge = (source: string, target: string) => ({ source, target, sourceHandle: 'out', targetHandle: 'in' });

describe('checkConnection with tables', () => {
  // Ports as the table nodes declare them: a table flows through the table operators and into a
  // layer (whose input lists "table" next to "images" and "tensor"), never into an image operator.
  const port = (name: string, types: string[]): PortSpec => ({ name, types, multiple: false, label: name });
  const entry = (type: string, inputs: PortSpec[], outputs: PortSpec[]): CatalogEntry => ({
    type,
    category: type.split('.')[0] as CatalogEntry['category'],
    title: type,
    description: '',
    inputs,
    outputs,
    random: false,
    params_schema: {},
  });
  const tables = indexCatalog([
    entry('dataset.table', [], [port('out', ['table'])]),
    entry('dataset.builtin', [], [port('out', ['images'])]),
    entry('op.Standardize', [port('in', ['table'])], [port('out', ['table'])]),
    entry('op.Resize', [port('in', ['images'])], [port('out', ['images'])]),
    entry('layer.Linear', [port('in', ['images', 'table', 'tensor'])], [port('out', ['tensor'])]),
    entry('train.Classifier', [port('in', ['tensor', 'logits'])], []),
  ]);
  const nodes = [
    'dataset.table',
    'dataset.builtin',
    'op.Standardize',
    'op.Resize',
    'layer.Linear',
    'train.Classifier',
  ].map((kind) => node(kind, kind));

  it('says a layer is missing when data goes straight into a train node', () => {
    // The review wired a table to "Train classifier" and read "outputs table; accepts tensor or logits".
    for (const source of ['dataset.table', 'op.Standardize', 'dataset.builtin']) {
      expect(checkConnection(edge(source, 'train.Classifier'), nodes, [], tables)).toMatchObject({
        ok: false,
        reason: 'needsLayer',
        values: { source, target: 'train.Classifier' },
      });
    }
    expect(checkConnection(edge('layer.Linear', 'train.Classifier'), nodes, [], tables)).toEqual({ ok: true });
  });

  it('accepts table edges by exact type', () => {
    expect(checkConnection(edge('dataset.table', 'op.Standardize'), nodes, [], tables)).toEqual({ ok: true });
    expect(checkConnection(edge('op.Standardize', 'layer.Linear'), nodes, [], tables)).toEqual({ ok: true });
  });

  it('keeps tables and images apart', () => {
    expect(checkConnection(edge('dataset.table', 'op.Resize'), nodes, [], tables)).toMatchObject({
      ok: false,
      reason: 'type',
      values: { produced: 'table', accepted: 'images' },
    });
    expect(checkConnection(edge('dataset.builtin', 'op.Standardize'), nodes, [], tables)).toMatchObject({
      ok: false,
      reason: 'type',
    });
  });
});

describe('checkConnection', () => {
  it('accepts an output whose type the input lists', () => {
    expect(checkConnection(edge('data', 'resize'), NODES, [], CATALOG)).toEqual({ ok: true });
    expect(checkConnection(edge('data', 'conv'), NODES, [], CATALOG)).toEqual({ ok: true });
    expect(checkConnection(edge('conv', 'train'), NODES, [], CATALOG)).toEqual({ ok: true });
  });

  it('refuses a tensor into an images-only input, naming both sides', () => {
    expect(checkConnection(edge('conv', 'resize'), NODES, [], CATALOG)).toEqual({
      ok: false,
      reason: 'type',
      values: { source: 'Conv2d', target: 'Resize', produced: 'tensor', accepted: 'images' },
    });
  });

  it('matches types exactly, never by substring', () => {
    expect(checkConnection(edge('data', 'train'), NODES, [], CATALOG)).toMatchObject({
      ok: false,
      reason: 'needsLayer',
    });
  });

  it('refuses a second edge into a single input and says where the first comes from', () => {
    const verdict = checkConnection(
      edge('relu', 'conv'),
      [...NODES.slice(0, 2), node('conv', 'layer.Conv2d'), node('relu', 'layer.ReLU', 'My ReLU')],
      [edge('data', 'conv')],
      CATALOG,
    );
    expect(verdict).toEqual({
      ok: false,
      reason: 'taken',
      values: { source: 'My ReLU', target: 'Conv2d', other: 'Built-in dataset' },
    });
  });

  it('lets a multi-input node take several edges, but not the same one twice', () => {
    const edges = [edge('conv', 'add')];
    expect(checkConnection(edge('relu', 'add'), NODES, edges, CATALOG)).toEqual({ ok: true });
    expect(checkConnection(edge('conv', 'add'), NODES, edges, CATALOG)).toMatchObject({
      ok: false,
      reason: 'duplicate',
    });
  });

  it('refuses self-loops and cycles', () => {
    expect(checkConnection(edge('conv', 'conv'), NODES, [], CATALOG)).toMatchObject({ ok: false, reason: 'self' });
    const edges = [edge('conv', 'relu')];
    expect(checkConnection(edge('relu', 'conv'), NODES, edges, CATALOG)).toMatchObject({ ok: false, reason: 'cycle' });
  });

  it('refuses ports the node does not have', () => {
    expect(checkConnection({ ...edge('data', 'conv'), targetHandle: 'other' }, NODES, [], CATALOG)).toMatchObject({
      ok: false,
      reason: 'port',
    });
    expect(checkConnection(edge('train', 'conv'), NODES, [], CATALOG)).toMatchObject({ ok: false, reason: 'port' });
  });
});

describe('reaches', () => {
  it('follows edges transitively', () => {
    const edges = [edge('a', 'b'), edge('b', 'c')];
    expect(reaches('a', 'c', edges)).toBe(true);
    expect(reaches('c', 'a', edges)).toBe(false);
  });
});
