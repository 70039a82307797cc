import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { getReport, type TaskReport } from '../tasks/api';
import { formatDuration, formatNumber, formatPercent } from '../tasks/format';
import { PageState } from '../tasks/widgets';
import { asKind, resolveKind, type TaskKind } from '../catalog/taskKind';
import { confusionOption, residualOption, scatterOption } from './chartOptions';
import { EChart } from './EChart';
import { errorText } from '../../i18n/errorText';

interface Props {
  taskId: string;
  status: string | null;
  /** The kind the task's graph or metrics say; the report's own "task" wins once it is loaded. */
  kind: TaskKind;
  /** Changes when the report may have appeared (the report artifact or the final status). */
  version: string;
}

function Metric({ label, value, hint, testId }: { label: string; value: string; hint?: string; testId?: string }) {
  return (
    <div className="kpi" title={hint} data-kpi={testId}>
      <span className="kpi__label">{label}</span>
      <span className="kpi__value">{value}</span>
    </div>
  );
}

/** A regression run's test figures, the predicted-vs-actual scatter and the residual histogram. */
function RegressionResults({ report }: { report: TaskReport }) {
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

function BestEpoch({ report }: { report: TaskReport }) {
  const { t } = useTranslation();
  return (
    <Metric
      label={t('monitor.bestEpoch')}
      value={report.best_epoch != null ? String(report.best_epoch) : '—'}
      hint={report.monitor ? t(`monitor.bestBy.${report.monitor}`, { defaultValue: report.monitor }) : undefined}
    />
  );
}

export function ResultsPanel({ taskId, status, kind, version }: Props) {
  if (status === 'SUCCEEDED') return <FinishedResults taskId={taskId} kind={kind} version={version} />;
  return <NotFinished status={status} />;
}

function NotFinished({ status }: { status: string | null }) {
  const { t } = useTranslation();
  const message = status === 'FAILED' || status === 'STOPPED' ? t('monitor.noResults') : t('monitor.resultsLater');
  return <PageState kind="empty" message={message} />;
}

function FinishedResults({ taskId, kind, version }: { taskId: string; kind: TaskKind; version: string }) {
  const { t } = useTranslation();
  const [report, setReport] = useState<TaskReport | null>(null);
  // The reason itself, worded when shown: in the language of the moment.
  const [failure, setFailure] = useState<unknown>(null);
  const error = failure === null ? null : errorText(failure, t);
  const [normalized, setNormalized] = useState(false);

  useEffect(() => {
    let cancelled = false;
    getReport(taskId)
      .then((value) => {
        if (cancelled) return;
        setReport(value);
        setFailure(null);
      })
      .catch((reason: unknown) => {
        if (!cancelled) setFailure(reason);
      });
    return () => {
      cancelled = true;
    };
  }, [taskId, version]);

  const classes = useMemo(() => report?.classes ?? [], [report]);
  const matrix = report?.confusion_matrix;
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

  if (error) return <PageState kind="error" message={t('monitor.reportFailed', { message: error })} />;
  if (!report) return <PageState kind="loading" message={t('monitor.reportLoading')} />;

  if (resolveKind(asKind(report.task), kind) === 'regression') return <RegressionResults report={report} />;
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
