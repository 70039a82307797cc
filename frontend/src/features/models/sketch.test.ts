import { describe, expect, it } from 'vitest';
import { areaResample, cropBox, grayToRgba, inkBounds, sketchable, sketchToImage, strokesAreDark } from './sketch';

/** A pad of w x h with a filled rectangle of ink. */
function pad(w: number, h: number, rect: { x: number; y: number; w: number; h: number }, value = 255) {
  const ink = new Uint8ClampedArray(w * h);
  for (let y = rect.y; y < rect.y + rect.h; y += 1)
    for (let x = rect.x; x < rect.x + rect.w; x += 1) ink[y * w + x] = value;
  return ink;
}

describe('sketchToImage', () => {
  it('is null for an empty pad (faint noise ignored)', () => {
    expect(sketchToImage(new Uint8ClampedArray(100), 10, 10, { width: 8, height: 8 })).toBeNull();
    expect(sketchToImage(pad(10, 10, { x: 1, y: 1, w: 2, h: 2 }, 10), 10, 10, { width: 8, height: 8 })).toBeNull();
  });

  it('finds the bounding box of the strokes', () => {
    expect(inkBounds(pad(20, 10, { x: 3, y: 2, w: 5, h: 4 }), 20, 10)).toEqual({
      left: 3,
      top: 2,
      width: 5,
      height: 4,
    });
  });

  it('grows the box to the output aspect ratio plus the margin, around the same centre', () => {
    const box = cropBox({ left: 10, top: 20, width: 40, height: 100 }, 1, 0.1);
    expect(box.width).toBeCloseTo(120);
    expect(box.height).toBeCloseTo(120);
    expect(box.left + box.width / 2).toBeCloseTo(30);
    expect(box.top + box.height / 2).toBeCloseTo(70);
  });

  it('centres strokes drawn in a corner and keeps the margin empty', () => {
    // A 40x40 square in the top-left corner of a 200x200 pad, to 10x10 with a 25% margin:
    // the square fills the middle 6.67 pixels, the border stays black.
    const out = sketchToImage(pad(200, 200, { x: 0, y: 0, w: 40, h: 40 }), 200, 200, {
      width: 10,
      height: 10,
      margin: 0.25,
    })!;
    expect(out).toHaveLength(100);
    expect(out[0]).toBe(0);
    expect(out[99]).toBe(0);
    expect(out[5 * 10 + 5]).toBe(255);
    expect(out[4 * 10 + 4]).toBe(255);
    const row = Array.from(out.slice(50, 60));
    expect(row).toEqual([...row].reverse()); // symmetric: centred
  });

  it('averages areas when shrinking, so thin strokes stay visible as gray', () => {
    const thin = pad(100, 100, { x: 10, y: 10, w: 80, h: 1 });
    const out = sketchToImage(thin, 100, 100, { width: 8, height: 8, margin: 0 })!;
    const middle = Array.from(out.slice(3 * 8, 5 * 8));
    expect(Math.max(...middle)).toBeGreaterThan(0);
    expect(Math.max(...middle)).toBeLessThan(255);
  });

  it('inverts for models trained on dark strokes', () => {
    const out = sketchToImage(pad(50, 50, { x: 10, y: 10, w: 30, h: 30 }), 50, 50, {
      width: 4,
      height: 4,
      margin: 0.5,
      invert: true,
    })!;
    expect(out[0]).toBe(255);
    expect(out[1 * 4 + 1]).toBeLessThan(255);
  });

  it('resamples by exact area coverage', () => {
    const gray = Uint8ClampedArray.from([0, 255, 255, 0]);
    const out = areaResample(gray, 4, 1, { left: 0, top: 0, width: 4, height: 1 }, 2, 1);
    expect(Array.from(out)).toEqual([127.5, 127.5]);
    const shifted = areaResample(gray, 4, 1, { left: -2, top: 0, width: 4, height: 1 }, 2, 1);
    expect(Array.from(shifted)).toEqual([0, 127.5]);
  });
});

describe('helpers', () => {
  it('turns gray into opaque RGBA', () => {
    expect(Array.from(grayToRgba([0, 200]))).toEqual([0, 0, 0, 255, 200, 200, 200, 255]);
  });

  it('reads the stroke polarity from the normalisation mean', () => {
    expect(strokesAreDark([0.13])).toBe(false);
    expect(strokesAreDark([0.9, 0.8, 0.85])).toBe(true);
    expect(strokesAreDark(null)).toBe(false);
  });
});

describe('sketchable', () => {
  it('offers the sketch pad for models of small single-channel images only', () => {
    expect(sketchable(1, [28, 28])).toBe(true); // digits, Quick, Draw! sketches
    expect(sketchable(3, [64, 64])).toBe(false); // photos of faces
    expect(sketchable(1, [224, 224])).toBe(false); // grey photographs
  });
});
