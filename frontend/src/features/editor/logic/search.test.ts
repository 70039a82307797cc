import { describe, expect, it } from 'vitest';
import { fieldsFromSchema, type FieldSpec } from './schemaForm';
import {
  collectSearch,
  defaultSpec,
  parseChoices,
  searchKind,
  searchedCount,
  specProblem,
  withSpec,
  type SearchSpec,
} from './search';

const field = (over: Partial<FieldSpec>): FieldSpec => ({
  name: 'x',
  title: 'X',
  description: '',
  kind: 'number',
  required: false,
  nullable: false,
  default: undefined,
  ...over,
});

describe('searchKind', () => {
  it('searches numbers as ranges and enums and switches as choices, nothing else', () => {
    expect(searchKind(field({ kind: 'number' }))).toBe('float');
    expect(searchKind(field({ kind: 'integer' }))).toBe('int');
    expect(searchKind(field({ kind: 'enum', options: ['adam', 'sgd'] }))).toBe('choice');
    expect(searchKind(field({ kind: 'boolean' }))).toBe('choice');
    expect(searchKind(field({ kind: 'string' }))).toBeNull();
    expect(searchKind(field({ kind: 'number', locked: { value: 1, reason: 'fixed' } }))).toBeNull();
  });
});

describe('defaultSpec', () => {
  it('puts a positive real a decade either side of its value on a log scale', () => {
    expect(defaultSpec(field({ kind: 'number', exclusiveMinimum: 0 }), 0.001)).toEqual({
      type: 'float',
      low: 0.0001,
      high: 0.01,
      log: true,
    });
  });

  it('keeps a probability inside its bounds', () => {
    const spec = defaultSpec(field({ kind: 'number', minimum: 0, exclusiveMaximum: 1 }), 0);
    expect(spec).toEqual({ type: 'float', low: 0, high: 0.99, log: false });
    expect(specProblem(spec!)).toBeNull();
  });

  it('halves and doubles a whole number, within its minimum', () => {
    expect(defaultSpec(field({ kind: 'integer', minimum: 1 }), 64)).toEqual({
      type: 'int',
      low: 32,
      high: 128,
      log: false,
      step: 1,
    });
  });

  it('offers every choice of an enum and both states of a switch', () => {
    expect(defaultSpec(field({ kind: 'enum', options: ['adam', 'sgd'] }), 'adam')).toEqual({
      type: 'choice',
      values: ['adam', 'sgd'],
    });
    expect(defaultSpec(field({ kind: 'boolean' }), true)).toEqual({ type: 'choice', values: [true, false] });
  });
});

// Params of the catalog as the server describes them (engine params models' JSON Schema).
const CATALOG_FIELDS: [string, Record<string, unknown>][] = [
  ['layer.Dropout.p', { default: 0.5, exclusiveMaximum: 1.0, minimum: 0.0, title: 'Probability', type: 'number' }],
  [
    'layer.Linear.out_features',
    { anyOf: [{ const: 'auto', type: 'string' }, { type: 'integer' }], default: 'auto', title: 'Outputs' },
  ],
  ['train.Classifier.lr', { default: 0.001, exclusiveMinimum: 0, maximum: 10, title: 'Learning rate', type: 'number' }],
  ['train.Classifier.weight_decay', { default: 0.0, maximum: 1, minimum: 0, title: 'Weight decay', type: 'number' }],
  ['train.Classifier.momentum', { default: 0.9, maximum: 0.999, minimum: 0, title: 'Momentum', type: 'number' }],
  ['train.Classifier.batch_size', { default: 64, maximum: 8192, minimum: 1, title: 'Batch size', type: 'integer' }],
  [
    'train.Classifier.label_smoothing',
    { default: 0.0, maximum: 0.5, minimum: 0, title: 'Label smoothing', type: 'number' },
  ],
];

/** Whether a value is one the field's own bounds accept (exclusive ones strictly). */
function fits(field: FieldSpec, value: number): boolean {
  return (
    (field.minimum === undefined || value >= field.minimum) &&
    (field.maximum === undefined || value <= field.maximum) &&
    (field.exclusiveMinimum === undefined || value > field.exclusiveMinimum) &&
    (field.exclusiveMaximum === undefined || value < field.exclusiveMaximum)
  );
}

describe('pre-filled ranges of the catalog', () => {
  it.each(CATALOG_FIELDS)('%s pre-fills a valid range inside its own bounds', (_name, schema) => {
    const [spec] = fieldsFromSchema({ type: 'object', properties: { x: schema } } as never);
    for (const value of [spec!.default, 0.2, 3]) {
      const range = defaultSpec(spec!, value as number);
      expect(range).not.toBeNull();
      expect(specProblem(range!)).toBeNull();
      if (range!.type !== 'choice') {
        expect(fits(spec!, range!.low), `low ${range!.low} for ${String(value)}`).toBe(true);
        expect(fits(spec!, range!.high), `high ${range!.high} for ${String(value)}`).toBe(true);
      }
    }
  });

  it('searches Dropout at 0.2 linearly inside [0, 1), not 0.02-1', () => {
    const [p] = fieldsFromSchema({ type: 'object', properties: { p: CATALOG_FIELDS[0]![1] } } as never);
    expect(defaultSpec(p!, 0.2)).toEqual({ type: 'float', low: 0, high: 0.45, log: false });
  });

  it("searches a Linear width left at 'auto' as a whole number", () => {
    const [width] = fieldsFromSchema({ type: 'object', properties: { w: CATALOG_FIELDS[1]![1] } } as never);
    expect(searchKind(width!)).toBe('int');
    expect(defaultSpec(width!, 'auto')).toEqual({ type: 'int', low: 16, high: 256, log: true, step: 1 });
    expect(defaultSpec(width!, 64)).toEqual({ type: 'int', low: 32, high: 128, log: false, step: 1 });
  });
});

describe('specProblem', () => {
  it('refuses an empty range, a log scale from 0 and no choices', () => {
    expect(specProblem({ type: 'float', low: 1, high: 1 })).toBe('range');
    expect(specProblem({ type: 'float', low: 0, high: 1, log: true })).toBe('log');
    expect(specProblem({ type: 'choice', values: [] })).toBe('choices');
    expect(specProblem({ type: 'int', low: 1, high: 4 })).toBeNull();
  });
});

describe('the graph section from the nodes', () => {
  it('collects each node part under its id and leaves the section out when nothing is searched', () => {
    const lr = { type: 'float' as const, low: 1e-4, high: 1e-2, log: true };
    const nodes: { id: string; data: { search?: Record<string, SearchSpec> } }[] = [
      { id: 'train', data: { search: { lr } } },
      { id: 'conv', data: {} },
      { id: 'drop', data: { search: {} } },
    ];
    expect(collectSearch(nodes)).toEqual({ train: { lr } });
    expect(collectSearch([{ id: 'conv', data: {} }])).toBeUndefined();
    expect(searchedCount({ train: { lr, epochs: { type: 'int', low: 1, high: 3 } }, drop: { p: lr } })).toBe(3);
  });

  it('adds and removes one param of a node part', () => {
    const spec = { type: 'choice' as const, values: [32, 64] };
    const part = withSpec(undefined, 'batch_size', spec);
    expect(part).toEqual({ batch_size: spec });
    expect(withSpec(part, 'batch_size', undefined)).toBeUndefined();
  });
});

describe('parseChoices', () => {
  it('reads numbers as numbers and refuses a word among them', () => {
    expect(parseChoices('32, 64,128', true)).toEqual([32, 64, 128]);
    expect(parseChoices('32, big', true)).toBeNull();
    expect(parseChoices('adam, sgd', false)).toEqual(['adam', 'sgd']);
    expect(parseChoices(' , ', false)).toBeNull();
  });
});
