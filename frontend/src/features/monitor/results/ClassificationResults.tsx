import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { formatDuration, formatNumber, formatPercent } from '../../tasks/format';
import { confusionOption } from '../chartOptions';
import { EChart } from '../EChart';
import type { ResultViewProps } from './types';
import { BestEpoch, Metric } from './widgets';

/** A classifier's test figures, the confusion matrix and the per-class precision, recall and F1. */
export function ClassificationResults({ report }: ResultViewProps) {
  const { t } = useTranslation();
  const [normalized, setNormalized] = useState(false);
  const classes = useMemo(() => report.classes ?? [], [report]);
  const matrix = report.confusion_matrix;
  const option = useMemo(
    () =>
      matrix && classes.length
        ? confusionOption(
            matrix,
            classes,
            { predicted: t('monitor.predicted'), actual: t('monitor.actual') },
            normalized,
          )
        : null,
    [matrix, classes, normalized, t],
  );

  const test = report.test ?? {};
  const averages = report.averages ?? {};
  const chartHeight = Math.min(560, Math.max(320, classes.length * 30 + 90));
  return (
    <div className="results" data-kind="classification">
      <div className="kpis">
        <Metric label={t('monitor.testAccuracy')} value={formatPercent(test.test_accuracy, 2)} />
        <Metric label={t('monitor.testLoss')} value={formatNumber(test.test_loss)} />
        <Metric label={t('monitor.top5')} value={formatPercent(test.test_top5_accuracy, 1)} />
        <Metric label={t('monitor.macroF1')} value={formatPercent(averages.macro_f1, 1)} />
        <BestEpoch report={report} />
        <Metric label={t('monitor.trainTime')} value={formatDuration(report.timings?.train_s)} />
      </div>
      <div className="results__grid">
        <figure className="chart-card" data-chart="confusion">
          <figcaption>
            {t('monitor.confusion')}
            <span className="seg-group" role="group" aria-label={t('monitor.confusionShow')}>
              <button
                type="button"
                className={`seg-btn${normalized ? '' : ' is-active'}`}
                aria-pressed={!normalized}
                onClick={() => setNormalized(false)}
              >
                {t('monitor.counts')}
              </button>
              <button
                type="button"
                className={`seg-btn${normalized ? ' is-active' : ''}`}
                aria-pressed={normalized}
                onClick={() => setNormalized(true)}
              >
                {t('monitor.rowShares')}
              </button>
            </span>
          </figcaption>
          {option ? (
            <EChart
              option={option}
              label={t('monitor.confusionLabel', { count: classes.length })}
              height={chartHeight}
              points={classes.length ** 2}
            />
          ) : (
            <p className="muted">{t('monitor.noMatrix')}</p>
          )}
        </figure>
        <div className="chart-card per-class">
          <h3>{t('monitor.perClass')}</h3>
          <div className="per-class__scroll">
            <table className="wb-table wb-table--dense">
              <thead>
                <tr>
                  <th scope="col">{t('monitor.class')}</th>
                  <th scope="col" className="num">
                    {t('monitor.precision')}
                  </th>
                  <th scope="col" className="num">
                    {t('monitor.recall')}
                  </th>
                  <th scope="col" className="num">
                    {t('monitor.f1')}
                  </th>
                  <th scope="col" className="num">
                    {t('monitor.support')}
                  </th>
                </tr>
              </thead>
              <tbody>
                {(report.per_class ?? []).map((row) => (
                  <tr key={row.class} className={row.f1 < 0.5 ? 'is-weak' : undefined}>
                    <th scope="row">{row.class}</th>
                    <td className="num">{formatPercent(row.precision)}</td>
                    <td className="num">{formatPercent(row.recall)}</td>
                    <td className="num">
                      <span className="bar-cell" style={{ ['--share' as string]: row.f1 }}>
                        {formatPercent(row.f1)}
                      </span>
                    </td>
                    <td className="num">{row.support}</td>
                  </tr>
                ))}
              </tbody>
              {averages.macro_f1 !== undefined && (
                <tfoot>
                  <tr>
                    <th scope="row">{t('monitor.macro')}</th>
                    <td className="num">{formatPercent(averages.macro_precision)}</td>
                    <td className="num">{formatPercent(averages.macro_recall)}</td>
                    <td className="num">{formatPercent(averages.macro_f1)}</td>
                    <td className="num" />
                  </tr>
                  <tr>
                    <th scope="row">{t('monitor.weighted')}</th>
                    <td className="num">{formatPercent(averages.weighted_precision)}</td>
                    <td className="num">{formatPercent(averages.weighted_recall)}</td>
                    <td className="num">{formatPercent(averages.weighted_f1)}</td>
                    <td className="num" />
                  </tr>
                </tfoot>
              )}
            </table>
          </div>
        </div>
      </div>
    </div>
  );
}
