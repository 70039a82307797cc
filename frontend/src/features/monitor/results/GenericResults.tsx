import { useTranslation } from 'react-i18next';
import { formatDuration, formatNumber, formatPercent } from '../../tasks/format';
import type { ResultViewProps } from './types';
import { BestEpoch, Metric } from './widgets';

/** The results of a kind without a view of its own: its test metrics, labelled and formatted as
 * the kind describes them (a metric it does not describe is shown by its name, as a number). */
export function GenericResults({ report, kind }: ResultViewProps) {
  const { t } = useTranslation();
  const test = report.test ?? {};
  const described = new Map((kind?.metrics ?? []).map((metric) => [`test_${metric.key}`, metric]));
  const keys = [...described.keys(), ...Object.keys(test).filter((key) => !described.has(key))];
  return (
    <div className="results" data-kind={kind?.name ?? report.task ?? ''}>
      <div className="kpis">
        <BestEpoch report={report} />
        <Metric label={t('monitor.trainTime')} value={formatDuration(report.timings?.train_s)} />
      </div>
      <table className="wb-table wb-table--dense" data-testid="generic-results">
        <tbody>
          {keys
            .filter((key) => typeof test[key] === 'number')
            .map((key) => {
              const metric = described.get(key);
              const value = test[key];
              return (
                <tr key={key}>
                  <th scope="row">{metric ? metric.label : key.replace(/^test_/, '')}</th>
                  <td className="num">
                    {metric?.format === 'percent' ? formatPercent(value, 2) : formatNumber(value)}
                    {metric?.unit ? ` ${metric.unit}` : ''}
                  </td>
                </tr>
              );
            })}
        </tbody>
      </table>
    </div>
  );
}
