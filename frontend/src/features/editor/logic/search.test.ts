import { describe, expect, it } from 'vitest';
import type { FieldSpec } from './schemaForm';
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
    expect(spec).toEqual({ type: 'float', low: 0, high: 0.9, log: false });
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
