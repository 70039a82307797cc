import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { formatBytes } from '../tasks/format';
import { useLogTail } from './useLogTail';

/** The end of log.txt, followed while the task is active; scrolls along unless scrolled up. */
export function LogPanel({ taskId, active }: { taskId: string; active: boolean }) {
  const { t } = useTranslation();
  const log = useLogTail(taskId, active);
  const [stick, setStick] = useState(true);
  const pre = useRef<HTMLPreElement>(null);

  useEffect(() => {
    if (stick && pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [log.text, stick]);

  return (
    <div className="log">
      <div className="log__bar">
        <span className="muted">{active ? t('monitor.logFollowing') : t('monitor.logFinished')}</span>
        <span className="muted">{formatBytes(log.size)}</span>
        <label className="inline-check">
          <input type="checkbox" checked={stick} onChange={(event) => setStick(event.target.checked)} />
          {t('monitor.logStick')}
        </label>
      </div>
      {log.error && (
        <p className="wb-error" role="alert">
          {t('monitor.logFailed', { message: log.error })}
        </p>
      )}
      {/* The run's log.txt as written (English, like any program's log): not for translators. */}
      <pre
        ref={pre}
        className="log__text"
        translate="no"
        tabIndex={0}
        aria-label={t('monitor.logLabel')}
        onScroll={(event) => {
          const el = event.currentTarget;
          const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
          if (atBottom !== stick) setStick(atBottom);
        }}
      >
        {log.text || t('monitor.logEmpty')}
      </pre>
    </div>
  );
}
