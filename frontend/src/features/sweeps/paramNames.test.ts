import { describe, expect, it } from 'vitest';
import type { CatalogEntry } from '../../api/types';
import { indexCatalog } from '../catalog/catalogIndex';
import { paramLabel, paramLabeller, paramTitle, searchedParams, sweepParams } from './paramNames';

// The train node as the catalog sends it in each language (GET /api/catalog?lang=...).
const trainEntry = (lr: string, optimizer: string): CatalogEntry => ({
  type: 'train.Classifier',
  category: 'train',
  title: 'Train',
  description: '',
  inputs: [],
  outputs: [],
  random: false,
  params_schema: {
    type: 'object',
    properties: {
      lr: { type: 'number', exclusiveMinimum: 0, default: 0.001, title: lr },
      optimizer: { $ref: '#/$defs/Optimizer', default: 'adam', title: optimizer },
      epochs: { type: 'integer', minimum: 1, default: 10 },
    },
    $defs: { Optimizer: { type: 'string', enum: ['adam', 'sgd'], title: 'Optimizer' } },
  },
});
const EN = indexCatalog([trainEntry('Learning rate', 'Optimizer')]);
const ZH = indexCatalog([trainEntry('学习率', '优化器')]);
const NODES = [
  { id: 'train', type: 'train.Classifier' },
  { id: 'fit', type: 'train.Classifier', label: 'Fine-tune' },
];

describe('paramTitle', () => {
  it("reads the param's title from its node type's schema, in the catalog's language", () => {
    expect(paramTitle(EN, 'train.Classifier', 'lr')).toBe('Learning rate');
    expect(paramTitle(ZH, 'train.Classifier', 'lr')).toBe('学习率');
    expect(paramTitle(ZH, 'train.Classifier', 'optimizer')).toBe('优化器');
  });

  it('falls back to the param name: no title, an unknown param or type, no catalog yet', () => {
    expect(paramTitle(EN, 'train.Classifier', 'epochs')).toBe('epochs');
    expect(paramTitle(EN, 'train.Classifier', 'momentum')).toBe('momentum');
    expect(paramTitle(EN, 'train.Other', 'lr')).toBe('lr');
    expect(paramTitle(EN, undefined, 'lr')).toBe('lr');
    expect(paramTitle(indexCatalog([]), 'train.Classifier', 'lr')).toBe('lr');
  });
});

describe('paramLabel', () => {
  it('names the node by its display name, else its id, then the param by its title', () => {
    expect(paramLabel('train', 'lr', NODES, EN)).toBe('train · Learning rate');
    expect(paramLabel('train', 'lr', NODES, ZH)).toBe('train · 学习率');
    expect(paramLabel('fit', 'lr', NODES, EN)).toBe('Fine-tune · Learning rate');
  });

  it('keeps the ids while the graph is not known', () => {
    expect(paramLabel('train', 'lr', null, EN)).toBe('train · lr');
    expect(paramLabel('gone', 'lr', NODES, EN)).toBe('gone · lr');
  });
});

describe('searchedParams', () => {
  it('lists the search section in its order, with the `node.param` key beside the label', () => {
    const search = {
      train: { lr: { type: 'float', low: 1e-4, high: 1e-2 }, optimizer: { type: 'choice', values: ['adam'] } },
      fit: { lr: { type: 'float', low: 1e-5, high: 1e-3 } },
    };
    expect(searchedParams(search, NODES, ZH)).toEqual([
      { key: 'train.lr', label: 'train · 学习率', node: 'train', title: '学习率' },
      { key: 'train.optimizer', label: 'train · 优化器', node: 'train', title: '优化器' },
      { key: 'fit.lr', label: 'Fine-tune · 学习率', node: 'Fine-tune', title: '学习率' },
    ]);
    expect(searchedParams(undefined, NODES, EN)).toEqual([]);
  });

  it('gives a labeller that shows an unknown key as it is', () => {
    const name = paramLabeller(searchedParams({ train: { lr: {} } }, NODES, EN));
    expect(name('train.lr')).toBe('train · Learning rate');
    expect(name('other.p')).toBe('other.p');
  });
});

describe('sweepParams', () => {
  const search = { fit: { lr: { type: 'float', low: 1e-5, high: 1e-3 } }, train: { optimizer: { type: 'choice' } } };

  it("names the sweep's params from the nodes of the graph it swept", () => {
    const base_graph = { version: 1, name: 'g', nodes: NODES, edges: [], search };
    expect(sweepParams({ search, base_graph }, ZH)).toEqual([
      { key: 'fit.lr', label: 'Fine-tune · 学习率', node: 'Fine-tune', title: '学习率' },
      { key: 'train.optimizer', label: 'train · 优化器', node: 'train', title: '优化器' },
    ]);
  });

  it('keeps the ids for a graph without nodes', () => {
    expect(sweepParams({ search, base_graph: {} }, EN).map((param) => param.label)).toEqual([
      'fit · lr',
      'train · optimizer',
    ]);
  });
});
