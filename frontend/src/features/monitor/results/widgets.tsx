// What every kind's result view shows alike: a KPI and the best epoch.
import { useTranslation } from 'react-i18next';
import type { TaskReport } from '../../tasks/api';

export function Metric({
  label,
  value,
  hint,
  testId,
}: {
  label: string;
  value: string;
  hint?: string;
  testId?: string;
}) {
  return (
    <div className="kpi" title={hint} data-kpi={testId}>
      <span className="kpi__label">{label}</span>
      <span className="kpi__value">{value}</span>
    </div>
  );
}

export function BestEpoch({ report }: { report: TaskReport }) {
  const { t } = useTranslation();
  return (
    <Metric
      label={t('monitor.bestEpoch')}
      value={report.best_epoch != null ? String(report.best_epoch) : '—'}
      hint={report.monitor ? t(`monitor.bestBy.${report.monitor}`, { defaultValue: report.monitor }) : undefined}
    />
  );
}
