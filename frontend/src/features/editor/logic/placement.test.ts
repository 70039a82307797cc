import { describe, expect, it } from 'vitest';
import { findFreeSpot } from './placement';

const SIZE = { width: 100, height: 50 };

describe('findFreeSpot', () => {
  it('keeps the wanted spot when it is free', () => {
    expect(findFreeSpot({ x: 0, y: 0 }, SIZE, [{ x: 300, y: 300, width: 100, height: 50 }])).toEqual({ x: 0, y: 0 });
  });

  it('moves off a node to the nearest free spot', () => {
    const taken = [{ x: 0, y: 0, width: 100, height: 50 }];
    const spot = findFreeSpot({ x: 0, y: 0 }, SIZE, taken, { step: 10, margin: 0 });
    const clear = spot.x >= 100 || spot.x <= -100 || spot.y >= 50 || spot.y <= -50;
    expect(clear).toBe(true);
    expect(Math.abs(spot.y)).toBeLessThanOrEqual(50); // up or down is nearer than sideways
  });

  it('finds a gap between rows', () => {
    const taken = [
      { x: -500, y: -120, width: 1000, height: 100 },
      { x: -500, y: 100, width: 1000, height: 100 },
    ];
    const spot = findFreeSpot({ x: 0, y: 60 }, SIZE, taken, { step: 10, margin: 10 });
    expect(spot.y).toBeGreaterThanOrEqual(-10);
    expect(spot.y + SIZE.height).toBeLessThanOrEqual(90);
  });
});
