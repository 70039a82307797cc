import { describe, expect, it } from 'vitest';
import { LABEL_HEIGHT, labelBottom, lanePath, laneBetween } from './lane';

const node = (x: number, y: number) => ({ x, y, width: 180, height: 100 });

describe('laneBetween', () => {
  it('runs a wrapped edge through the gap between two bands', () => {
    // Band 1 at y 0..100, band 2 at y 170..270; the chain wraps from the right end to the left.
    const boxes = [node(0, 0), node(240, 0), node(480, 0), node(0, 170), node(240, 170)];
    const lane = laneBetween({ x: 660, y: 50 }, { x: 0, y: 220 }, boxes)!;
    expect(lane).toBeGreaterThan(110);
    expect(lane).toBeLessThan(160);
  });

  it('finds nothing when nodes fill the whole height between the ports', () => {
    const boxes = [node(0, 0), node(0, 100), node(0, 200)];
    expect(laneBetween({ x: 400, y: 10 }, { x: 0, y: 290 }, boxes)).toBeNull();
  });

  it('ignores nodes left or right of the way', () => {
    const lane = laneBetween({ x: 400, y: 0 }, { x: 200, y: 200 }, [node(900, 0), node(900, 100)]);
    expect(lane).toBe(100);
  });
});

describe('lanePath', () => {
  it('leaves the source to the right and enters the target from the left', () => {
    const path = lanePath({ x: 600, y: 50 }, { x: 0, y: 250 }, 140);
    expect(path.startsWith('M 600 50 L')).toBe(true);
    expect(path.endsWith('L 0 250')).toBe(true);
    expect(path).toContain('140');
  });
});

describe('labelBottom', () => {
  // A label is drawn centred on x, between (bottom - LABEL_HEIGHT) and bottom; a handle is 11 px.
  const clearOf = (bottom: number, port: { x: number; y: number }, x: number, halfWidth = 45) =>
    Math.abs(port.x - x) > halfWidth + 6 || bottom < port.y - 6 || bottom - LABEL_HEIGHT > port.y + 6;

  it('lifts the label of a short edge above both ports, clear of their handles', () => {
    // Two cards 50 px apart, the output port 32 px above the input (penguins' "6 features").
    const source = { x: 460, y: 256 };
    const target = { x: 510, y: 288 };
    const middle = { x: 485, y: 272 };
    const bottom = labelBottom(source, target, middle.y);
    expect(clearOf(bottom, source, middle.x)).toBe(true);
    expect(clearOf(bottom, target, middle.x)).toBe(true);
    // The middle of the curve, where the label stood before, covers the source's handle.
    expect(clearOf(middle.y - 6, source, middle.x)).toBe(false);
  });

  it('keeps the label of a long edge on its middle', () => {
    expect(labelBottom({ x: 0, y: 100 }, { x: 400, y: 300 }, 200)).toBe(194);
  });
});
