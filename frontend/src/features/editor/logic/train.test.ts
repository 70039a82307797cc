import { describe, expect, it } from 'vitest';
import type { GraphError, GraphSpec, JsonSchema } from '../../../api/types';
import { epochsOf, epochsRange, firstFailingNode, graphProblemsOf, mergeErrors, withEpochs } from './train';
import { indexCatalog } from '../../catalog/catalogIndex';
import { graphKind, trainNodeOf } from '../../catalog/taskKind';
import type { CatalogEntry } from '../../../api/types';
import { TASK_KINDS } from '../../../test/fixtures';

const graph = (epochs?: number): GraphSpec => ({
  version: 1,
  name: 'g',
  nodes: [
    { id: 'data', type: 'dataset.builtin', params: { name: 'digits' } },
    { id: 'dense', type: 'layer.Linear', params: { out_features: 'auto' } },
    { id: 'train', type: 'train.Classifier', params: epochs === undefined ? { lr: 0.01 } : { epochs, lr: 0.01 } },
  ],
  edges: [
    { source: 'data', target: 'dense' },
    { source: 'dense', target: 'train' },
  ],
});
const entry = (type: string, category: CatalogEntry['category'], task?: string): CatalogEntry => ({
  type,
  category,
  title: type,
  description: '',
  inputs: [],
  outputs: [],
  random: false,
  params_schema: {},
  ...(task ? { task } : {}),
});
const catalog = indexCatalog(
  [
    entry('dataset.builtin', 'dataset'),
    entry('layer.Linear', 'layer'),
    entry('train.Classifier', 'train', 'classification'),
  ],
  TASK_KINDS,
);
const schema: JsonSchema = { properties: { epochs: { type: 'integer', default: 10, minimum: 1, maximum: 1000 } } };
const problem = (node_id: string | null, message = 'bad'): GraphError => ({
  code: 'shape_error',
  message,
  node_id,
  field: null,
  details: {},
});

describe('train from the editor', () => {
  it('finds the train node and its epochs, or the default', () => {
    expect(trainNodeOf(graph(), catalog)?.id).toBe('train');
    expect(trainNodeOf({ ...graph(), nodes: graph().nodes.slice(0, 2) }, catalog)).toBeNull();
    expect(epochsOf(trainNodeOf(graph(3), catalog), schema)).toBe(3);
    expect(epochsOf(trainNodeOf(graph(), catalog), schema)).toBe(10);
    expect(epochsOf(trainNodeOf(graph(), catalog), undefined)).toBeNull();
    expect(epochsRange(schema)).toEqual({ min: 1, max: 1000 });
    expect(epochsRange(undefined)).toEqual({ min: 1, max: 1000 });
  });

  it('finds the train node by its catalog category, not by its type name', () => {
    // A train node type outside the "train." names is still the train node; a "train." name the
    // catalog does not list in that category is not.
    const odd = indexCatalog(
      [entry('dataset.builtin', 'dataset'), entry('fit.Table', 'train', 'regression')],
      TASK_KINDS,
    );
    const g: GraphSpec = {
      version: 1,
      name: 'g',
      nodes: [
        { id: 'data', type: 'dataset.builtin' },
        { id: 'fake', type: 'train.Classifier' },
        { id: 'fit', type: 'fit.Table' },
      ],
      edges: [],
    };
    expect(trainNodeOf(g, odd)?.id).toBe('fit');
    expect(graphKind(g, odd)).toBe('regression');
    expect(graphKind(graph(), catalog)).toBe('classification');
    // A catalog that names no kind (an older server) says nothing: the caller falls back.
    expect(graphKind(graph(), indexCatalog([entry('train.Classifier', 'train')]))).toBeNull();
  });

  it('overrides epochs in a copy, keeping the other params', () => {
    const before = graph(20);
    const after = withEpochs(before, 'train', 1);
    expect(after.nodes[2]!.params).toEqual({ epochs: 1, lr: 0.01 });
    expect(before.nodes[2]!.params).toEqual({ epochs: 20, lr: 0.01 });
    expect(after.nodes[0]).toBe(before.nodes[0]);
    expect(withEpochs(before, 'train', 20)).toBe(before);
    expect(withEpochs(before, null, 5)).toBe(before);
    expect(withEpochs(graph(), 'train', 2).nodes[2]!.params).toEqual({ lr: 0.01, epochs: 2 });
  });

  it("reads the graph problems of the server's 422 answer", () => {
    const body = {
      detail: {
        message: 'the graph does not validate',
        errors: [{ code: 'shape_error', message: 'too small', node_id: 'pool', field: 'kernel_size' }, 'junk'],
      },
    };
    expect(graphProblemsOf(body)).toEqual([
      { code: 'shape_error', message: 'too small', node_id: 'pool', field: 'kernel_size', details: {} },
    ]);
    expect(graphProblemsOf({ detail: 'no such graph' })).toBeNull();
    expect(graphProblemsOf({ detail: [{ loc: ['body'], msg: 'x' }] })).toBeNull();
    expect(graphProblemsOf(null)).toBeNull();
  });

  it('picks the first problem on a node still on the canvas', () => {
    const errors = [problem(null), problem('gone'), problem('dense'), problem('train')];
    expect(firstFailingNode(errors, new Set(['data', 'dense', 'train']))).toBe('dense');
    expect(firstFailingNode([problem(null)], new Set(['data']))).toBeNull();
  });

  it('merges the live and the submitted problems without repeats', () => {
    const live = [problem('dense', 'a')];
    expect(mergeErrors(live, [problem('dense', 'a'), problem('train', 'b')])).toEqual([
      problem('dense', 'a'),
      problem('train', 'b'),
    ]);
  });
});
