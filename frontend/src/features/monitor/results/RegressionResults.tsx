import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { formatDuration, formatNumber } from '../../tasks/format';
import { residualOption, scatterOption } from '../chartOptions';
import { EChart } from '../EChart';
import type { ResultViewProps } from './types';
import { BestEpoch, Metric } from './widgets';

/** A regression run's test figures, the predicted-vs-actual scatter and the residual histogram. */
export function RegressionResults({ report }: ResultViewProps) {
  const { t } = useTranslation();
  const test = report.test ?? {};
  const scatter = report.scatter;
  const residuals = report.residuals;
  const scatterChart = useMemo(
    () =>
      scatter
        ? scatterOption(scatter, {
            actual: t('monitor.actualValue'),
            predicted: t('monitor.predictedValue'),
            identity: t('monitor.identityLine'),
            empty: t('monitor.noScatter'),
          })
        : null,
    [scatter, t],
  );
  const residualChart = useMemo(
    () =>
      residuals
        ? residualOption(residuals, {
            residual: t('monitor.residualAxis'),
            count: t('monitor.countAxis'),
            empty: t('monitor.noResiduals'),
          })
        : null,
    [residuals, t],
  );
  return (
    <div className="results" data-kind="regression">
      <div className="kpis">
        <Metric label={t('monitor.testOf.mae')} value={formatNumber(test.test_mae)} testId="test-mae" />
        <Metric label={t('monitor.testOf.rmse')} value={formatNumber(test.test_rmse)} testId="test-rmse" />
        <Metric label={t('monitor.testOf.r2')} value={formatNumber(test.test_r2)} testId="test-r2" />
        <Metric label={t('monitor.testLoss')} value={formatNumber(test.test_loss)} />
        <BestEpoch report={report} />
        <Metric label={t('monitor.trainTime')} value={formatDuration(report.timings?.train_s)} />
      </div>
      <div className="results__grid results__grid--even">
        <figure className="chart-card" data-chart="scatter">
          <figcaption>
            {t('monitor.scatter')}
            {scatter && scatter.total > scatter.actual.length && (
              <span className="muted">
                {' '}
                {t('monitor.scatterThinned', { shown: scatter.actual.length, total: scatter.total })}
              </span>
            )}
          </figcaption>
          {scatterChart ? (
            <EChart
              option={scatterChart}
              label={t('monitor.scatterLabel', { count: scatter?.actual.length ?? 0 })}
              height={360}
              points={scatter?.actual.length ?? 0}
            />
          ) : (
            <p className="muted">{t('monitor.noScatter')}</p>
          )}
        </figure>
        <figure className="chart-card" data-chart="residuals">
          <figcaption>
            {t('monitor.residuals')}
            {residuals && (
              <span className="muted">
                {' '}
                {t('monitor.residualStats', { mean: formatNumber(residuals.mean), std: formatNumber(residuals.std) })}
              </span>
            )}
          </figcaption>
          {residualChart ? (
            <EChart
              option={residualChart}
              label={t('monitor.residualLabel', { count: residuals?.counts.length ?? 0 })}
              height={360}
              points={residuals?.counts.length ?? 0}
            />
          ) : (
            <p className="muted">{t('monitor.noResiduals')}</p>
          )}
        </figure>
      </div>
    </div>
  );
}
