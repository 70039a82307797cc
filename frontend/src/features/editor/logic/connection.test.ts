import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../../test/fixtures';
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
    expect(checkConnection(edge('data', 'train'), NODES, [], CATALOG)).toMatchObject({ ok: false, reason: 'type' });
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
