import { useId, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { DatasetSummary } from '../../../api/types';
import { Modal } from '../../../ui/Modal';
import { errorText } from '../../../i18n/errorText';
import { countedWithClasses } from '../../inputs/registry';

export type TrainStep = 'saving' | 'submitting';

interface Props {
  /** The graph's name: the task's name unless changed here. */
  name: string;
  /** The train node's epochs (its value or the default); null when it has no such setting. */
  epochs: number | null;
  range: { min: number; max: number };
  nodeCount: number;
  dataset: DatasetSummary | null;
  /** Save and queue; resolves once the task exists (the page then changes), rejects with a message. */
  onSubmit: (options: { name: string; epochs: number | null }, onStep: (step: TrainStep) => void) => Promise<void>;
  onClose: () => void;
}

/** The last look before training: the task's name and an epochs override, then Start. */
export function TrainDialog({
  name: initialName,
  epochs: initialEpochs,
  range,
  nodeCount,
  dataset,
  onSubmit,
  onClose,
}: Props) {
  const { t, i18n } = useTranslation();
  const baseId = useId();
  const [name, setName] = useState(initialName);
  const [epochsText, setEpochsText] = useState(initialEpochs === null ? '' : String(initialEpochs));
  const [step, setStep] = useState<TrainStep | null>(null);
  const [error, setError] = useState<string | null>(null);

  const epochs = Number(epochsText);
  const epochsOk =
    initialEpochs === null || (/^\d+$/.test(epochsText.trim()) && epochs >= range.min && epochs <= range.max);
  const busy = step !== null;

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    if (busy || !epochsOk) return;
    setError(null);
    setStep('saving');
    onSubmit({ name: name.trim() || initialName, epochs: initialEpochs === null ? null : epochs }, setStep).catch(
      (reason: unknown) => {
        setStep(null);
        setError(errorText(reason, t));
      },
    );
  };

  const formId = `${baseId}-form`;
  return (
    <Modal
      title={t('train.title')}
      onClose={() => !busy && onClose()}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose} disabled={busy}>
            {t('common.cancel')}
          </button>
          <button
            type="submit"
            form={formId}
            className="btn btn--primary btn--train"
            disabled={busy || !epochsOk}
            data-action="start-training"
          >
            {step ? t(`train.step.${step}`) : t('train.start')}
          </button>
        </>
      }
    >
      <form id={formId} className="train-form" onSubmit={submit} aria-busy={busy}>
        <p className="train-form__summary">
          {t('train.summary', { count: nodeCount })}
          {dataset &&
            ` · ${
              Array.isArray(dataset.columns)
                ? t('train.datasetTable', {
                    rows: dataset.count.toLocaleString(i18n.language),
                    columns: dataset.columns.length,
                  })
                : countedWithClasses(dataset, t, i18n.language)
            }`}
        </p>
        <div className="field">
          <label htmlFor={`${baseId}-name`}>{t('train.name')}</label>
          <input
            id={`${baseId}-name`}
            type="text"
            value={name}
            maxLength={200}
            disabled={busy}
            onChange={(event) => setName(event.target.value)}
          />
        </div>
        {initialEpochs !== null && (
          <div className={`field${epochsOk ? '' : ' has-error'}`}>
            <label htmlFor={`${baseId}-epochs`}>{t('train.epochs')}</label>
            <input
              id={`${baseId}-epochs`}
              type="number"
              inputMode="numeric"
              min={range.min}
              max={range.max}
              step={1}
              value={epochsText}
              disabled={busy}
              aria-invalid={!epochsOk}
              aria-describedby={`${baseId}-epochs-help`}
              autoFocus
              onChange={(event) => setEpochsText(event.target.value)}
            />
            <p id={`${baseId}-epochs-help`} className="field__help">
              {epochsOk ? t('train.epochsHelp') : t('train.epochsRange', range)}
            </p>
          </div>
        )}
        <p className="field__help">{t('train.savedNote')}</p>
        {error && (
          <p className="train-form__error" role="alert">
            {t('train.failed', { message: error })}
          </p>
        )}
      </form>
    </Modal>
  );
}
