// Calls of a function at most once per interval: the first at once, the last one of a burst after
// the interval (so a drawing's latest state always arrives), the ones between dropped.

export interface Throttled {
  /** Ask for a call: now if the interval since the last one is over, else once at its end. */
  request: () => void;
  /** Drop a call still waiting (the caller makes its own final call, or goes away). */
  cancel: () => void;
}

export function throttle(fn: () => void, everyMs: number, now: () => number = () => Date.now()): Throttled {
  let last = Number.NEGATIVE_INFINITY;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const fire = () => {
    timer = undefined;
    last = now();
    fn();
  };
  return {
    request: () => {
      if (timer !== undefined) return;
      const wait = last + everyMs - now();
      if (wait <= 0) fire();
      else timer = setTimeout(fire, wait);
    },
    cancel: () => {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
