import { useCallback, useEffect, useRef, useState } from 'react';
import { eventsUrl } from '../tasks/api';
import { isFinal } from '../tasks/format';
import { INITIAL_STATE, parseEvent, reduceEvents, type MonitorState, type TaskEvent } from './series';

export type Connection = 'connecting' | 'live' | 'reconnecting' | 'ended';

const KINDS = ['status', 'start', 'progress', 'metric', 'log', 'artifact', 'error'] as const;
/** Events are applied in batches: a replay of thousands of events renders a few times, not thousands. */
const FLUSH_MS = 150;
const MAX_BACKOFF_MS = 30_000;

/**
 * Follow a task's server-sent events. The browser's EventSource resumes by itself with
 * Last-Event-ID after a dropped connection; when the server refuses (the EventSource gives up),
 * this reconnects with `?after=<last id>` and a growing delay. The stream ends after the final
 * status: the source is closed then, or it would reconnect every two seconds forever.
 * `resume()` follows again (after a retry re-queues the task). Nothing connects until `enabled`
 * (the task exists: a missing one would be asked for again and again).
 */
export function useTaskEvents(
  taskId: string,
  enabled = true,
): { state: MonitorState; connection: Connection; resume: () => void } {
  const [state, setState] = useState<MonitorState>(INITIAL_STATE);
  const [connection, setConnection] = useState<Connection>('connecting');
  const [generation, setGeneration] = useState(0);
  const applied = useRef<MonitorState>(INITIAL_STATE);

  useEffect(() => {
    if (!enabled) return;
    let source: EventSource | null = null;
    let queue: TaskEvent[] = [];
    let flushTimer: number | undefined;
    let retryTimer: number | undefined;
    let failures = 0;
    let disposed = false;
    // The newest status known, applied or queued: a stream that closes after a final one has ended.
    const ended = () => {
      for (let i = queue.length - 1; i >= 0; i -= 1) {
        if (queue[i]!.kind === 'status') return isFinal(String(queue[i]!.data.status));
      }
      return isFinal(applied.current.status);
    };

    const flush = () => {
      flushTimer = undefined;
      if (!queue.length || disposed) return;
      applied.current = reduceEvents(applied.current, queue);
      queue = [];
      setState(applied.current);
    };
    const lastId = () => Math.max(applied.current.lastEventId, queue[queue.length - 1]?.id ?? 0);

    const connect = () => {
      setConnection(failures ? 'reconnecting' : 'connecting');
      const es = new EventSource(eventsUrl(taskId, lastId()));
      source = es;
      es.onopen = () => {
        failures = 0;
        setConnection('live');
      };
      for (const kind of KINDS) {
        es.addEventListener(kind, (event: Event) => {
          // `error` is also the name of the EventSource's own connection errors (plain Events).
          if (!(event instanceof MessageEvent) || typeof event.data !== 'string') return;
          const parsed = parseEvent(event.lastEventId, kind, event.data);
          if (!parsed) return;
          queue.push(parsed);
          if (flushTimer === undefined) flushTimer = window.setTimeout(flush, FLUSH_MS);
        });
      }
      es.onerror = (event: Event) => {
        if (event instanceof MessageEvent) return;
        if (ended()) {
          es.close();
          flush();
          setConnection('ended');
          return;
        }
        if (es.readyState === EventSource.CLOSED) {
          es.close();
          failures += 1;
          setConnection('reconnecting');
          retryTimer = window.setTimeout(connect, Math.min(MAX_BACKOFF_MS, 1000 * 2 ** failures));
        } else {
          setConnection('reconnecting');
        }
      };
    };

    connect();
    return () => {
      disposed = true;
      source?.close();
      window.clearTimeout(flushTimer);
      window.clearTimeout(retryTimer);
    };
  }, [taskId, generation, enabled]);

  const resume = useCallback(() => setGeneration((n) => n + 1), []);
  return { state, connection, resume };
}
