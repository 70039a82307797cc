import { describe, expect, it } from 'vitest';
import { DEFAULT_NODE_SIZE, layeredLayout } from './layout';

const ids = (...names: string[]) => names.map((id) => ({ id }));
const e = (source: string, target: string) => ({ source, target });
const { width: W, height: H } = DEFAULT_NODE_SIZE;

/** Whether two placed nodes' boxes overlap. */
const overlap = (a: { x: number; y: number }, b: { x: number; y: number }) =>
  a.x < b.x + W && b.x < a.x + W && a.y < b.y + H && b.y < a.y + H;

describe('layeredLayout', () => {
  it('puts each node one column right of its deepest parent', () => {
    const at = layeredLayout(ids('a', 'b', 'c', 'd'), [e('a', 'b'), e('b', 'c'), e('a', 'c'), e('c', 'd')], {
      columnWidth: 200,
    });
    expect([at.get('a')!.x, at.get('b')!.x, at.get('c')!.x, at.get('d')!.x]).toEqual([0, 200, 400, 600]);
  });

  it('stacks a branch in one column, between the nodes it joins', () => {
    const at = layeredLayout(ids('a', 'b', 'c', 'd'), [e('a', 'b'), e('a', 'c'), e('b', 'd'), e('c', 'd')]);
    expect(at.get('b')!.x).toBe(at.get('c')!.x);
    expect(overlap(at.get('b')!, at.get('c')!)).toBe(false);
    const [upper, lower] = [at.get('b')!.y, at.get('c')!.y].sort((x, y) => x - y);
    for (const end of ['a', 'd']) {
      expect(at.get(end)!.y).toBeGreaterThan(upper!);
      expect(at.get(end)!.y).toBeLessThan(lower!);
    }
  });

  it('orders a column by the rows of the parents, so edges do not cross', () => {
    const at = layeredLayout(ids('p1', 'p2', 'c2', 'c1'), [e('p1', 'c1'), e('p2', 'c2')]);
    expect(Math.sign(at.get('p1')!.y - at.get('p2')!.y)).toBe(Math.sign(at.get('c1')!.y - at.get('c2')!.y));
  });

  it('places every node even with a cycle or a dangling edge', () => {
    const at = layeredLayout(ids('a', 'b', 'c'), [e('a', 'b'), e('b', 'c'), e('c', 'b'), e('a', 'zz')]);
    expect(at.size).toBe(3);
    for (const position of at.values()) expect(Number.isFinite(position.x) && Number.isFinite(position.y)).toBe(true);
  });

  it('makes room for nodes taller than the default', () => {
    const tall = { id: 'b', measured: { width: 180, height: 400 } };
    const at = layeredLayout([{ id: 'a' }, tall, { id: 'c' }], [e('a', 'c')]);
    const b = at.get('b')!;
    for (const id of ['a', 'c']) {
      const p = at.get(id)!;
      const apart = p.x + W <= b.x || b.x + W <= p.x || p.y + H <= b.y || b.y + 400 <= p.y;
      expect(apart).toBe(true);
    }
  });

  it('wraps a long chain into bands about as wide as the view, in reading order', () => {
    const names = Array.from({ length: 20 }, (_, i) => `n${i}`);
    const chain = names.slice(1).map((id, i) => e(names[i]!, id));
    const at = layeredLayout(ids(...names), chain, { columnWidth: 240, bandGap: 70, aspect: 1.4 });
    const xs = new Set([...at.values()].map((p) => p.x));
    const ys = new Set([...at.values()].map((p) => p.y));
    expect(xs.size).toBeLessThan(20);
    expect(ys.size).toBeGreaterThan(1);
    const width = Math.max(...xs) + W;
    const height = Math.max(...ys) + H;
    expect(width / height).toBeGreaterThan(0.7);
    expect(width / height).toBeLessThan(2.8);
    // Band by band, left to right: the chain reads like text.
    const order = [...names].sort((a, b) => at.get(a)!.y - at.get(b)!.y || at.get(a)!.x - at.get(b)!.x);
    expect(order).toEqual(names);
    // Bands are apart by the gap the wrapped edges run in; no two nodes overlap.
    const bandTops = [...ys].sort((a, b) => a - b);
    for (let i = 1; i < bandTops.length; i++) expect(bandTops[i]! - bandTops[i - 1]!).toBeGreaterThanOrEqual(H + 70);
    const placed = [...at.values()];
    for (let i = 0; i < placed.length; i++)
      for (let j = i + 1; j < placed.length; j++) expect(overlap(placed[i]!, placed[j]!)).toBe(false);
  });

  it('keeps short networks in one band, and every network when the view has no shape', () => {
    const chain = (n: number) => {
      const names = Array.from({ length: n }, (_, i) => `n${i}`);
      return layeredLayout(
        ids(...names),
        names.slice(1).map((id, i) => e(names[i]!, id)),
        { aspect: 1 },
      );
    };
    expect(new Set([...chain(3).values()].map((p) => p.y)).size).toBe(1);
    const names = Array.from({ length: 30 }, (_, i) => `n${i}`);
    const long = layeredLayout(
      ids(...names),
      names.slice(1).map((id, i) => e(names[i]!, id)),
    );
    expect(new Set([...long.values()].map((p) => p.y)).size).toBe(1);
  });

  it('keeps a chain in one row when the view shows that row at a comfortable zoom', () => {
    const chain = (n: number) => {
      const names = Array.from({ length: n }, (_, i) => `n${i}`);
      const at = layeredLayout(
        ids(...names),
        names.slice(1).map((id, i) => e(names[i]!, id)),
        {
          aspect: 1.2,
          viewHeight: 640,
        },
      );
      return new Set([...at.values()].map((p) => p.y)).size;
    };
    expect(chain(4)).toBe(1);
    expect(chain(16)).toBeGreaterThan(1);
  });

  it('starts at the origin it is given', () => {
    expect(layeredLayout(ids('a'), [], { origin: { x: 5, y: 7 } }).get('a')).toEqual({ x: 5, y: 7 });
  });
});
