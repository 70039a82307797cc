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
  /** A second way to go on (a plain button between Cancel and the confirm button). */
  alternative?: { label: string; onChoose: () => void };
}

/** "Are you sure?" with the action's own error shown in place when it fails. */
export function ConfirmDialog({ title, body, confirmLabel, onConfirm, onClose, danger = true, alternative }: Props) {
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
          {alternative && (
            <button type="button" className="btn" onClick={alternative.onChoose} disabled={busy} data-alternative>
              {alternative.label}
            </button>
          )}
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

/** A question with two ways on: the confirm button or the alternative's; null when cancelled. */
export type Choose = (question: Question & { alternativeLabel: string }) => Promise<'confirm' | 'alternative' | null>;

/**
 * `confirm(question)` resolves true when the user confirms, false when they cancel or close;
 * render `dialog` where the question should appear. One question at a time: asking again while
 * one is open answers the open one with false.
 */
export function useConfirm(): { confirm: Confirm; choose: Choose; dialog: ReactNode } {
  const [question, setQuestion] = useState<(Question & { alternativeLabel?: string }) | null>(null);
  type Answer = 'confirm' | 'alternative' | null;
  const answer = useRef<((choice: Answer) => void) | null>(null);

  const settle = useCallback((choice: Answer) => {
    answer.current?.(choice);
    answer.current = null;
    setQuestion(null);
  }, []);

  const choose = useCallback<Choose>(
    (next) =>
      new Promise<Answer>((resolve) => {
        answer.current?.(null);
        answer.current = resolve;
        setQuestion(next);
      }),
    [],
  );
  const confirm = useCallback<Confirm>(
    async (next) => (await choose({ ...next, alternativeLabel: '' })) === 'confirm',
    [choose],
  );

  const dialog = question && (
    <ConfirmDialog
      title={question.title}
      body={question.body}
      confirmLabel={question.confirmLabel}
      danger={question.danger ?? false}
      alternative={
        question.alternativeLabel
          ? { label: question.alternativeLabel, onChoose: () => settle('alternative') }
          : undefined
      }
      onConfirm={async () => settle('confirm')}
      onClose={() => settle(null)}
    />
  );
  return { confirm, choose, dialog };
}
