import { afterEach, describe, expect, it, vi } from 'vitest';
import { throttle } from './throttle';

afterEach(() => vi.useRealTimers());

describe('throttle', () => {
  it('calls through a continuous 2 s stroke every 250 ms, not only after it', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const live = throttle(fn, 250);
    // A pointer move every 16 ms (one per frame) for 2 s, with no pause.
    for (let t = 0; t < 2000; t += 16) {
      live.request();
      vi.advanceTimersByTime(16);
    }
    expect(fn.mock.calls.length).toBeGreaterThanOrEqual(7);
    expect(fn.mock.calls.length).toBeLessThanOrEqual(9);
  });

  it('makes the first call at once and the last of a burst at the interval’s end; cancel drops it', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const live = throttle(fn, 250);
    live.request();
    expect(fn).toHaveBeenCalledTimes(1);
    live.request();
    live.request();
    expect(fn).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(250);
    expect(fn).toHaveBeenCalledTimes(2);
    live.request();
    live.cancel();
    vi.advanceTimersByTime(1000);
    expect(fn).toHaveBeenCalledTimes(2);
  });
});
