// Small pieces shared by the task center, the monitor, the models and the datasets pages.
import { useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Modal } from '../../ui/Modal';
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

interface ConfirmProps {
  title: string;
  body: ReactNode;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  danger?: boolean;
}

/** "Are you sure?" with the action's own error shown in place when it fails. */
export function ConfirmDialog({ title, body, confirmLabel, onConfirm, onClose, danger = true }: ConfirmProps) {
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const confirm = () => {
    setBusy(true);
    setError(null);
    onConfirm()
      .then(onClose)
      .catch((reason: unknown) => {
        setError(reason instanceof Error ? reason.message : String(reason));
        setBusy(false);
      });
  };
  return (
    <Modal
      title={title}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button
            type="button"
            className={`btn ${danger ? 'btn--danger-solid' : 'btn--primary'}`}
            onClick={confirm}
            disabled={busy}
            data-confirm
          >
            {confirmLabel}
          </button>
        </>
      }
    >
      <div className="confirm__body">{body}</div>
      {error && (
        <p className="dialog-error" role="alert">
          {error}
        </p>
      )}
    </Modal>
  );
}

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

/** Error text of anything thrown. */
export function messageOf(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
