// Small pieces shared by the task center, the monitor, the models and the datasets pages.
import { useTranslation } from 'react-i18next';
import { statusTone } from './format';
import './workbench.css';

export function StatusBadge({ status }: { status: string }) {
  const { t } = useTranslation();
  return (
    <span className={`badge badge--${statusTone(status)}`} data-status={status}>
      <span className="badge__dot" aria-hidden="true" />
      {t(`tasks.status.${status}`, { defaultValue: status })}
    </span>
  );
}

export function ProgressBar({ value, label }: { value: number; label: string }) {
  const share = Math.min(1, Math.max(0, Number.isFinite(value) ? value : 0));
  return (
    <div
      className="progress"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(share * 100)}
    >
      <div className="progress__fill" style={{ width: `${share * 100}%` }} />
    </div>
  );
}

// The confirm dialog is the app's own (ui/); re-exported for the pages that import it from here.
export { ConfirmDialog } from '../../ui/ConfirmDialog';

/** A page-level message: loading, empty, or an error with a retry button. */
export function PageState({
  kind,
  message,
  onRetry,
}: {
  kind: 'loading' | 'empty' | 'error';
  message: string;
  onRetry?: () => void;
}) {
  const { t } = useTranslation();
  return (
    <div className={`page-state page-state--${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      <p>{message}</p>
      {onRetry && (
        <button type="button" className="btn" onClick={onRetry}>
          {t('tasks.retryLoad')}
        </button>
      )}
    </div>
  );
}
