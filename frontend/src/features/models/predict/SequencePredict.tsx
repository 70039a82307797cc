// The prediction page's body for a sequence model (the input type registry's,
// features/inputs/registry.ts): .ts, .csv or .npy files sent to POST /predict, each sequence's
// series plotted beside the kind's answer (a classifier's pie and top classes, a regressor's value).
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DropZone } from '../../../ui/DropZone';
import { errorText } from '../../../i18n/errorText';
import { EChart } from '../../monitor/EChart';
import { formatDate } from '../../tasks/format';
import { PageState } from '../../tasks/widgets';
import { downsample, linesOption } from '../../inputs/sequencePlots';
import { readSeries, type Series } from '../../inputs/sequenceFile';
import type { PredictProps } from '../../inputs/types';
import type { SampleAnswer } from '../api';
import { formatValue } from '../tableForm';
import { FileAnswerView } from './FileAnswerView';
import { sentHeading, sequencesOf } from './sequenceCounts';
import { useFilePredictions } from './useFilePredictions';
import '../../inputs/inputs.css';

function answerLabel(found: SampleAnswer | undefined): string | null {
  if (!found) return null;
  const { answer } = found;
  if (answer.value !== undefined) return formatValue(answer.value);
  return answer.label ?? answer.top_k?.[0]?.class ?? null;
}

function SeriesPlot({ series, name }: { series: Series; name: string }) {
  const { t } = useTranslation();
  const option = useMemo(
    () =>
      linesOption([downsample(series)], {
        feature: (index) => t('inputs.feature', { n: index + 1 }),
        step: t('inputs.step'),
      }),
    [series, t],
  );
  return (
    <EChart
      option={option}
      label={t('inputs.plotLabel', { count: 1, name })}
      height={220}
      points={Math.min(series.length, 200)}
    />
  );
}

export default function SequencePredict({ model, trainedBy }: PredictProps) {
  const { t, i18n } = useTranslation();
  const { sent, send } = useFilePredictions(model.id, readSeries);
  const [selected, setSelected] = useState<{ id: string; index: number } | null>(null);
  const network = (model.input_spec.network_input as (number | null)[] | undefined) ?? [];
  const features = network[network.length - 1] ?? '?';

  const current = sent.find((item) => item.id === selected?.id) ?? sent[0];
  const index = current && selected?.id === current.id ? selected.index : 0;
  const series = current?.read?.[index];
  const answer = current?.answers?.[index];
  const title = current ? t('inputs.seriesOf', { n: index + 1, name: current.file.name }) : '';
  return (
    <>
      <p className="monitor__meta muted">
        {t('inputs.sequenceMeta', {
          kind: t(`models.kind.${model.task}`),
          features,
          count: typeof features === 'number' ? features : 2,
          created: formatDate(model.created_at, i18n.language),
        })}
        {trainedBy}
      </p>
      <div className="predict__grid">
        <div className="predict__inputs">
          <div className="chart-card">
            <h2>{t('inputs.sequenceUpload')}</h2>
            <DropZone
              hint={t('inputs.sequenceHint')}
              buttonLabel={t('inputs.chooseSequences')}
              accept=".ts,.csv,.tsv,.npy"
              multiple
              inputName="sequence-files"
              onFiles={(files) => {
                const first = send(files);
                if (first) setSelected({ id: first, index: 0 });
              }}
            />
            <p className="muted">{t('inputs.sequenceHelp', { features })}</p>
          </div>
          {sent.length > 0 && (
            <div className="chart-card">
              <h2>{sentHeading(sent, t)}</h2>
              <ul className="inputs seq-inputs" aria-label={t('models.inputsLabel')}>
                {sent.map((item) => {
                  const count = sequencesOf(item);
                  return Array.from({ length: count }, (_, i) => {
                    const active = current?.id === item.id && index === i;
                    const label = item.failure !== undefined ? '!' : (answerLabel(item.answers?.[i]) ?? '…');
                    return (
                      <li key={`${item.id}/${i}`}>
                        <button
                          type="button"
                          className={`input-chip${active ? ' is-active' : ''}`}
                          aria-pressed={active}
                          data-sequence={`${item.file.name}#${i + 1}`}
                          onClick={() => setSelected({ id: item.id, index: i })}
                        >
                          <span className="input-chip__name" translate="no">
                            {count > 1 ? `${item.file.name} #${i + 1}` : item.file.name}
                          </span>
                          <span className="input-chip__label">{label}</span>
                        </button>
                      </li>
                    );
                  });
                })}
              </ul>
            </div>
          )}
        </div>
        <div className="predict__result">
          {current ? (
            <div className="prediction seq-prediction" data-input={current.file.name} data-sequence-index={index}>
              <h3 translate="no">{title}</h3>
              <figure className="chart-card" data-chart="input-series">
                <figcaption>
                  {t('inputs.inputSeries')}
                  {series && <span className="muted"> · {t('inputs.steps', { count: series.length })}</span>}
                </figcaption>
                {series ? (
                  <SeriesPlot series={series} name={title} />
                ) : (
                  current.read === null && current.answers && <p className="muted">{t('inputs.notPlotted')}</p>
                )}
              </figure>
              <div className="chart-card" aria-live="polite">
                <h4>{t('inputs.answer')}</h4>
                {current.failure !== undefined && (
                  <p className="wb-error" role="alert">
                    {t('models.predictFailed', { message: errorText(current.failure, t) })}
                  </p>
                )}
                {answer ? (
                  <FileAnswerView answer={answer.answer} classes={current.classes ?? model.classes} />
                ) : (
                  current.failure === undefined && <p className="muted">{t('inputs.predicting')}</p>
                )}
              </div>
            </div>
          ) : (
            <PageState kind="empty" message={t('inputs.noSequences')} />
          )}
        </div>
      </div>
    </>
  );
}
