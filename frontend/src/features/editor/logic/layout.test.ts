import { describe, expect, it } from 'vitest';
import { columnsPerBand, layeredLayout } from './layout';

const ids = (...names: string[]) => names.map((id) => ({ id }));
const e = (source: string, target: string) => ({ source, target });

describe('layeredLayout', () => {
  it('puts each node one column right of its deepest parent', () => {
    const at = layeredLayout(ids('a', 'b', 'c', 'd'), [e('a', 'b'), e('b', 'c'), e('a', 'c'), e('c', 'd')], {
      columnWidth: 100,
    });
    expect([at.get('a')!.x, at.get('b')!.x, at.get('c')!.x, at.get('d')!.x]).toEqual([0, 100, 200, 300]);
  });

  it('centres the nodes of a column on the same line', () => {
    const at = layeredLayout(ids('a', 'b', 'c', 'd'), [e('a', 'b'), e('a', 'c'), e('b', 'd'), e('c', 'd')], {
      rowHeight: 100,
    });
    expect(at.get('a')!.y).toBe(50);
    expect([at.get('b')!.y, at.get('c')!.y].sort((x, y) => x - y)).toEqual([0, 100]);
    expect(at.get('d')!.y).toBe(50);
  });

  it('orders a column by the rows of the parents, so edges do not cross', () => {
    const at = layeredLayout(ids('p1', 'p2', 'c2', 'c1'), [e('p1', 'c1'), e('p2', 'c2')]);
    expect(at.get('p1')!.y).toBeLessThan(at.get('p2')!.y);
    expect(at.get('c1')!.y).toBeLessThan(at.get('c2')!.y);
  });

  it('places every node even with a cycle or a dangling edge', () => {
    const at = layeredLayout(ids('a', 'b', 'c'), [e('a', 'b'), e('b', 'c'), e('c', 'b'), e('a', 'zz')]);
    expect(at.size).toBe(3);
    for (const position of at.values()) expect(Number.isFinite(position.x) && Number.isFinite(position.y)).toBe(true);
  });

  it('wraps a long chain into bands about as wide as the view', () => {
    const names = Array.from({ length: 20 }, (_, i) => `n${i}`);
    const chain = names.slice(1).map((id, i) => e(names[i]!, id));
    const at = layeredLayout(ids(...names), chain, { columnWidth: 200, rowHeight: 100, bandGap: 50, aspect: 1.5 });
    const xs = new Set([...at.values()].map((p) => p.x));
    const ys = new Set([...at.values()].map((p) => p.y));
    expect(xs.size).toBeLessThan(20);
    expect(ys.size).toBeGreaterThan(1);
    const width = Math.max(...xs) + 200;
    const height = Math.max(...ys) + 100;
    expect(width / height).toBeGreaterThan(0.75);
    expect(width / height).toBeLessThan(3);
    // Reading order is kept: band by band, left to right.
    const order = [...names].sort((a, b) => at.get(a)!.y - at.get(b)!.y || at.get(a)!.x - at.get(b)!.x);
    expect(order).toEqual(names);
    // No two nodes share a spot.
    expect(new Set([...at.values()].map((p) => `${p.x},${p.y}`)).size).toBe(20);
  });

  it('keeps short networks in one band', () => {
    expect(columnsPerBand(3, 1, 1, 250, 140, 60)).toBe(3);
    expect(columnsPerBand(30, 1, Number.POSITIVE_INFINITY, 250, 140, 60)).toBe(30);
  });

  it('starts at the origin it is given', () => {
    expect(layeredLayout(ids('a'), [], { origin: { x: 5, y: 7 } }).get('a')).toEqual({ x: 5, y: 7 });
  });
});
