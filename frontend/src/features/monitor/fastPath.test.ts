import { describe, expect, it } from 'vitest';
import { t, zh } from './testI18n';
import { fastPathDecided, fastPathLine } from './fastPath';

const measured = {
  precision: 'bf16',
  memory_format: 'channels_last',
  reason: 'measured fastest, 2.05x fp32 contiguous',
  speedup: 2.05,
  measurements: [{}, {}, {}],
};

describe('fast path line', () => {
  it('says what was measured, in both languages', () => {
    expect(fastPathLine(measured, t)).toBe('bf16 · channels last (measured: 2.05× the fp32 speed)');
    expect(fastPathLine(measured, zh)).toBe('bf16 · 通道在后（实测：fp32 速度的 2.05 倍）');
  });

  it('tells a kept choice and an unmeasured one apart', () => {
    const kept = { ...measured, reason: 'kept from the checkpoint; measured fastest' };
    expect(fastPathLine(kept, t)).toBe('bf16 · channels last (kept from the checkpoint)');
    const small = { ...measured, precision: 'fp32', memory_format: 'contiguous', speedup: null, measurements: [] };
    expect(fastPathLine(small, t)).toBe('fp32 · contiguous');
    const tiny = { ...small, reason: 'a small run (83.8 billion operations): too short for measuring to pay' };
    expect(fastPathLine(tiny, t)).toBe('fp32 · contiguous (not measured: the run is too small to gain from it)');
    expect(fastPathLine(tiny, zh)).toBe('fp32 · 默认排列（未实测：训练量太小，实测不划算）');
    const table = { ...small, reason: 'no convolution over images and no native bf16: nothing to measure' };
    expect(fastPathLine(table, t)).toBe('fp32 · contiguous (nothing to measure for this network)');
    expect(fastPathLine({ ...measured, speedup: 1, measurements: [{}, {}] }, t)).toBe(
      'bf16 · channels last (measured: nothing faster)',
    );
  });

  it('shows nothing for runs recorded before the fast path', () => {
    expect(fastPathLine(undefined, t)).toBeNull();
    expect(fastPathLine(null, t)).toBeNull();
  });
});

describe('fast path decisions', () => {
  it('give the settings left on auto their outcome, worded', () => {
    expect(fastPathDecided(measured, t)).toEqual({ precision: 'bf16', memory_format: 'channels last' });
    expect(fastPathDecided(undefined, t)).toEqual({});
  });
});
