import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { EChart } from '../monitor/EChart';
import { PALETTE } from '../monitor/echarts';
import { formatPercent } from '../tasks/format';
import type { InvertChoice } from './api';
import type { Background } from './preprocess';
import { agrees, AGREEMENT_TOLERANCE, maxAbsDiff, pieSlices, ranking, topK } from './probabilities';
import { errorText } from '../../i18n/errorText';
import { formatValue } from './tableForm';

export interface InputItem {
  id: string;
  name: string;
  file: File;
  url: string;
  source: 'upload' | 'sketch';
  /** The drawing as it is now, predicted while the user draws (replaced at each change). */
  live?: boolean;
  /** The user's choice: auto inverts an image whose paper is the opposite of the training images'. */
  invert: InvertChoice;
  /** Bumped when the invert choice changes: answers for an older revision are dropped. */
  revision: number;
  /** Whether the prediction shown was made on the inverted image. */
  inverted?: boolean;
  server?: number[];
  /** A regression model's answer: the predicted number. */
  value?: number;
  /** Why the server's or the browser's prediction failed: the reason, worded when shown (i18n/errorText). */
  serverError?: unknown;
  browser?: number[];
  browserError?: unknown;
}

const PIE_COLORS = [...PALETTE.slice(0, 5), '#cbd5e1'];

/** The pie of a classifier's answer: the top five classes and the rest as one slice. */
export function pieOption(probabilities: number[], classes: string[], other: string) {
  // Slivers keep their legend entry but get no label, so the labels never pile up.
  const slices = pieSlices(probabilities, classes, 5, other).map((slice) =>
    slice.value < 0.03 ? { ...slice, label: { show: false }, labelLine: { show: false } } : slice,
  );
  return {
    animation: false,
    color: PIE_COLORS,
    tooltip: { trigger: 'item', valueFormatter: (value: unknown) => formatPercent(Number(value), 2) },
    legend: { orient: 'vertical', right: 4, top: 'middle', textStyle: { fontSize: 12, color: '#475467' } },
    series: [
      {
        type: 'pie',
        radius: ['34%', '62%'],
        center: ['42%', '50%'],
        avoidLabelOverlap: true,
        labelLine: { length: 8, length2: 8 },
        itemStyle: { borderColor: '#fff', borderWidth: 2 },
        label: {
          formatter: (p: { name: string; value: number }) => `${p.name}\n${formatPercent(p.value, 1)}`,
          fontSize: 12,
        },
        data: slices,
      },
    ],
  };
}

/** The selected input's probabilities: a pie chart, the top five, and browser/server agreement. */
interface Props {
  item: InputItem;
  classes: string[];
  /** A regression model: the answer is a number, not class probabilities. */
  regression?: boolean;
  browserOn: boolean;
  /** The ONNX model could not be loaded. */
  browserError: string | null;
  /** The training images' paper (model.json), for the inversion hint. */
  background: Background | null;
  onInvert: (choice: InvertChoice) => void;
}

export function PredictionView({
  item,
  classes,
  regression = false,
  browserOn,
  browserError,
  background,
  onInvert,
}: Props) {
  const { t } = useTranslation();
  const probabilities = item.server ?? item.browser ?? null;
  const option = useMemo(
    () => (probabilities ? pieOption(probabilities, classes, t('models.other')) : null),
    [probabilities, classes, t],
  );
  const ranked = ranking(classes.length);
  const top = probabilities ? topK(probabilities, classes, ranked.count) : [];
  const diff = item.server && item.browser ? maxAbsDiff(item.server, item.browser) : null;

  return (
    <div className="prediction" data-input={item.name}>
      <div className="prediction__head">
        <img src={item.url} alt="" className="prediction__thumb" />
        <div>
          <h3 translate={item.live ? undefined : 'no'}>{item.live ? t('models.liveSketch') : item.name}</h3>
          {item.value !== undefined && (
            <div className="answer" data-answer="value">
              <span className="answer__label">{t('models.predictedValue')}</span>
              <span className="answer__value" data-value={item.value}>
                {formatValue(item.value)}
              </span>
            </div>
          )}
          {top[0] && (
            <p className="prediction__label" data-label={top[0].label}>
              {t('models.predicted', { label: top[0].label, probability: formatPercent(top[0].probability, 1) })}
            </p>
          )}
        </div>
      </div>
      {item.inverted !== undefined && (
        <p className="inversion" data-inverted={item.inverted}>
          {item.inverted && (
            <span>
              {item.invert === 'auto' && (background === 'dark' || background === 'light')
                ? t('models.invertedHint', { paper: t(`models.paper.${background}`) })
                : t('models.invertedManual')}{' '}
            </span>
          )}
          <button
            type="button"
            className="btn"
            data-action={item.inverted ? 'undo-invert' : 'invert'}
            onClick={() => onInvert(item.inverted ? 'no' : 'yes')}
          >
            {item.inverted ? t('models.undoInvert') : t('models.invertColours')}
          </button>
        </p>
      )}
      {item.serverError !== undefined && (
        <p className="wb-error" role="alert">
          {t(regression ? 'models.predictFailed' : 'models.serverFailed', { message: errorText(item.serverError, t) })}
        </p>
      )}
      {!probabilities && item.value === undefined && item.serverError === undefined && (
        <p className="muted">{regression ? t('models.predicting') : t('models.classifying')}</p>
      )}
      {option && (
        <div className="prediction__body">
          <figure className="chart-card prediction__pie" data-chart="pie">
            <figcaption>{item.server ? t('models.serverProbabilities') : t('models.browserProbabilities')}</figcaption>
            <EChart
              option={option}
              label={t('models.pieLabel', { label: top[0]?.label ?? '' })}
              height={250}
              points={probabilities?.length}
            />
          </figure>
          <div className="chart-card">
            <h4>{t(ranked.key, { count: ranked.count })}</h4>
            <table className="wb-table wb-table--dense top5">
              <thead>
                <tr>
                  <th scope="col">{t('models.class')}</th>
                  <th scope="col" className="num">
                    {t('models.server')}
                  </th>
                  {browserOn && (
                    <th scope="col" className="num">
                      {t('models.browser')}
                    </th>
                  )}
                </tr>
              </thead>
              <tbody>
                {top.map((row) => (
                  <tr key={row.index}>
                    <th scope="row">{row.label}</th>
                    <td className="num">
                      <span className="bar-cell" style={{ ['--share' as string]: item.server?.[row.index] ?? 0 }}>
                        {formatPercent(item.server?.[row.index], 2)}
                      </span>
                    </td>
                    {browserOn && <td className="num">{formatPercent(item.browser?.[row.index], 2)}</td>}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}
      {browserOn && (
        <div className="agreement" role="status">
          {(item.browserError !== undefined || browserError) && (
            <span className="wb-error">
              {t('models.browserFailed', {
                message: item.browserError !== undefined ? errorText(item.browserError, t) : browserError,
              })}
            </span>
          )}
          {item.browserError === undefined && !browserError && !item.browser && (
            <span className="muted">{t('models.browserRunning')}</span>
          )}
          {diff !== null && (
            <span className={`agreement__value ${agrees(diff) ? 'is-good' : 'is-bad'}`} data-diff={diff}>
              {agrees(diff)
                ? t('models.agree', { diff: diff.toExponential(2), tolerance: AGREEMENT_TOLERANCE })
                : t('models.disagree', { diff: diff.toExponential(2), tolerance: AGREEMENT_TOLERANCE })}
            </span>
          )}
        </div>
      )}
    </div>
  );
}
