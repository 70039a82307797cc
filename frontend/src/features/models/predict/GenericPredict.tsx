// The prediction page's body for a model whose input type has none of its own
// (features/inputs/registry.ts): files sent to POST /predict, each sample's answer as the kind gives it.
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DropZone } from '../../../ui/DropZone';
import { errorText } from '../../../i18n/errorText';
import { formatDate } from '../../tasks/format';
import type { PredictProps } from '../../inputs/types';
import { FileAnswerView } from './FileAnswerView';
import { useFilePredictions } from './useFilePredictions';

const noRead = () => Promise.resolve(null);

export default function GenericPredict({ model, trainedBy }: PredictProps) {
  const { t, i18n } = useTranslation();
  const { sent, send } = useFilePredictions<null>(model.id, noRead);
  const [shown, setShown] = useState(0);
  return (
    <>
      <p className="monitor__meta muted">
        {t('inputs.fileMeta', {
          kind: t(`models.kind.${model.task}`),
          created: formatDate(model.created_at, i18n.language),
        })}
        {trainedBy}
      </p>
      <div className="chart-card">
        <h2>{t('inputs.fileUpload')}</h2>
        <DropZone
          hint={t('inputs.fileHint')}
          buttonLabel={t('inputs.chooseFiles')}
          accept="*/*"
          multiple
          inputName="files"
          onFiles={(files) => {
            send(files);
            setShown(0);
          }}
        />
      </div>
      {sent.slice(shown, shown + 20).map((item) => (
        <div key={item.id} className="chart-card" data-input={item.file.name} aria-live="polite">
          <h3 translate="no">{t('inputs.answerOf', { name: item.file.name })}</h3>
          {item.failure !== undefined && (
            <p className="wb-error" role="alert">
              {t('models.predictFailed', { message: errorText(item.failure, t) })}
            </p>
          )}
          {item.answers?.map((found) => (
            <div key={found.sample} data-sample={found.sample}>
              {item.answers!.length > 1 && <h4>{`#${found.sample}`}</h4>}
              <FileAnswerView answer={found.answer} classes={item.classes ?? model.classes} />
            </div>
          ))}
          {!item.answers && item.failure === undefined && <p className="muted">{t('inputs.predicting')}</p>}
        </div>
      ))}
    </>
  );
}
