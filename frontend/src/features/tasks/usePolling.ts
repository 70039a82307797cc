import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorText } from '../../i18n/errorText';

export interface Polled<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  /** Fetch again now (after an action), without waiting for the next tick. */
  refresh: () => void;
}

/**
 * Fetch now and then every `intervalMs` (null: once) while the page is visible. A new `key`
 * starts over; a slow answer never overwrites a newer one.
 */
export function usePolling<T>(fetcher: () => Promise<T>, intervalMs: number | null, key: string): Polled<T> {
  const [data, setData] = useState<T | null>(null);
  const { t } = useTranslation();
  // The reason itself, worded when shown: in the language of the moment.
  const [failure, setFailure] = useState<unknown>(null);
  const error = failure === null ? null : errorText(failure, t);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const latest = useRef(fetcher);
  useLayoutEffect(() => {
    latest.current = fetcher;
  }, [fetcher]);
  const request = useRef(0);

  // A new key starts over: reset while rendering, so no frame shows the old key's data.
  const [shownKey, setShownKey] = useState(key);
  if (shownKey !== key) {
    setShownKey(key);
    setData(null);
    setLoading(true);
    setFailure(null);
  }

  useEffect(() => {
    let timer: number | undefined;
    let cancelled = false;
    const run = () => {
      const id = ++request.current;
      latest
        .current()
        .then((value) => {
          if (cancelled || id !== request.current) return;
          setData(value);
          setFailure(null);
        })
        .catch((reason: unknown) => {
          if (cancelled || id !== request.current) return;
          setFailure(reason);
        })
        .finally(() => {
          if (cancelled || id !== request.current) return;
          setLoading(false);
          if (intervalMs !== null) timer = window.setTimeout(tickIfVisible, intervalMs);
        });
    };
    const tickIfVisible = () => {
      if (document.visibilityState === 'visible') run();
      else timer = window.setTimeout(tickIfVisible, intervalMs ?? 1000);
    };
    run();
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
    };
  }, [key, intervalMs, tick]);

  const refresh = useCallback(() => setTick((n) => n + 1), []);
  return { data, error, loading, refresh };
}

/** The current time, ticking every `everyMs` (for running durations). */
export function useNow(everyMs: number, active = true): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = window.setInterval(() => setNow(Date.now()), everyMs);
    return () => window.clearInterval(timer);
  }, [everyMs, active]);
  return now;
}
