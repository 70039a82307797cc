// "Are you sure?" in the page's own style (never the browser's confirm box, which blocks the page,
// cannot be translated and looks like a phishing prompt), as a component and as a promise.
import { useCallback, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Modal } from './Modal';
import { errorText } from '../i18n/errorText';

interface Props {
  title: string;
  body: ReactNode;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  danger?: boolean;
}

/** "Are you sure?" with the action's own error shown in place when it fails. */
export function ConfirmDialog({ title, body, confirmLabel, onConfirm, onClose, danger = true }: Props) {
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const confirm = () => {
    setBusy(true);
    setError(null);
    onConfirm()
      .then(onClose)
      .catch((reason: unknown) => {
        setError(errorText(reason, t));
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

export interface Question {
  title: string;
  body: ReactNode;
  confirmLabel: string;
  danger?: boolean;
}

export type Confirm = (question: Question) => Promise<boolean>;

/**
 * `confirm(question)` resolves true when the user confirms, false when they cancel or close;
 * render `dialog` where the question should appear. One question at a time: asking again while
 * one is open answers the open one with false.
 */
export function useConfirm(): { confirm: Confirm; dialog: ReactNode } {
  const [question, setQuestion] = useState<Question | null>(null);
  const answer = useRef<((yes: boolean) => void) | null>(null);

  const settle = useCallback((yes: boolean) => {
    answer.current?.(yes);
    answer.current = null;
    setQuestion(null);
  }, []);

  const confirm = useCallback<Confirm>(
    (next) =>
      new Promise<boolean>((resolve) => {
        answer.current?.(false);
        answer.current = resolve;
        setQuestion(next);
      }),
    [],
  );

  const dialog = question && (
    <ConfirmDialog
      title={question.title}
      body={question.body}
      confirmLabel={question.confirmLabel}
      danger={question.danger ?? false}
      onConfirm={async () => settle(true)}
      onClose={() => settle(false)}
    />
  );
  return { confirm, dialog };
}
