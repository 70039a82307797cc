import { useEffect, useRef, useState } from 'react';
import { getLogs } from '../tasks/api';
import { useTranslation } from 'react-i18next';
import { errorText } from '../../i18n/errorText';

const POLL_MS = 2000;
/** The log kept in the page; older lines are dropped (the full log stays on the server). */
const MAX_CHARS = 200_000;

export function trimLog(text: string, max = MAX_CHARS): string {
  if (text.length <= max) return text;
  const cut = text.indexOf('\n', text.length - max);
  return cut < 0 ? text.slice(text.length - max) : text.slice(cut + 1);
}

/** The end of a task's log.txt, read from the last offset every two seconds while `follow` holds. */
export function useLogTail(taskId: string, follow: boolean): { text: string; size: number; error: string | null } {
  const [text, setText] = useState('');
  const [size, setSize] = useState(0);
  const { t } = useTranslation();
  // The reason itself, worded when shown: in the language of the moment.
  const [failure, setFailure] = useState<unknown>(null);
  const error = failure === null ? null : errorText(failure, t);
  const offset = useRef(0);

  useEffect(() => {
    let timer: number | undefined;
    let cancelled = false;
    const read = async () => {
      try {
        // Whole chunks of 64 KiB until caught up, then wait for more.
        for (;;) {
          const chunk = await getLogs(taskId, offset.current);
          if (cancelled) return;
          if (chunk.next_offset < offset.current) {
            // The log was replaced (the task was deleted and made again): start over.
            offset.current = 0;
            setText('');
            continue;
          }
          offset.current = chunk.next_offset;
          setSize(chunk.size);
          if (chunk.text) setText((previous) => trimLog(previous + chunk.text));
          setFailure(null);
          if (chunk.next_offset >= chunk.size || !chunk.text) break;
        }
      } catch (reason) {
        if (!cancelled) setFailure(reason);
      }
      if (!cancelled && follow) timer = window.setTimeout(() => void read(), POLL_MS);
    };
    void read();
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
    };
  }, [taskId, follow]);

  return { text, size, error };
}
