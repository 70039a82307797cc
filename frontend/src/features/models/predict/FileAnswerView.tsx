// One answer of a model that predicts from files, as its kind answers: a classifier's pie and top
// classes, or a regressor's value (the answer says which by its fields, as the API's unions do).
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { EChart } from '../../monitor/EChart';
import { formatPercent } from '../../tasks/format';
import type { FileAnswer } from '../api';
import { pieOption } from '../PredictionView';
import { ranking, TOP_K, topK } from '../probabilities';
import { formatValue } from '../tableForm';

export function FileAnswerView({ answer, classes }: { answer: FileAnswer; classes: string[] }) {
  const { t } = useTranslation();
  const probabilities = answer.probabilities ?? null;
  const option = useMemo(
    () => (probabilities ? pieOption(probabilities, classes, t('models.other')) : null),
    [probabilities, classes, t],
  );
  if (answer.value !== undefined) {
    return (
      <div className="answer" data-answer="value">
        <span className="answer__label">{t('models.predictedValue')}</span>
        <span className="answer__value" data-value={answer.value}>
          {formatValue(answer.value)}
        </span>
      </div>
    );
  }
  const ranked = ranking(classes.length || TOP_K);
  const top = probabilities
    ? topK(probabilities, classes, ranked.count).map((row) => ({ label: row.label, probability: row.probability }))
    : (answer.top_k ?? []).map((row) => ({ label: row.class, probability: row.probability }));
  const best = top[0];
  return (
    <div className="answer answer--classes" data-answer="class">
      {best && (
        <p className="prediction__label" data-label={best.label}>
          {t('models.predicted', { label: best.label, probability: formatPercent(best.probability, 1) })}
        </p>
      )}
      <div className="prediction__body">
        {option && (
          <figure className="chart-card prediction__pie" data-chart="pie">
            <figcaption>{t('models.serverProbabilities')}</figcaption>
            <EChart
              option={option}
              label={t('models.pieLabel', { label: best?.label ?? '' })}
              height={230}
              points={probabilities?.length}
            />
          </figure>
        )}
        <div className="chart-card">
          <h4>{t(ranked.key, { count: ranked.count })}</h4>
          <table className="wb-table wb-table--dense top5">
            <tbody>
              {top.map((row) => (
                <tr key={row.label}>
                  <th scope="row">{row.label}</th>
                  <td className="num">
                    <span className="bar-cell" style={{ ['--share' as string]: row.probability }}>
                      {formatPercent(row.probability, 2)}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </div>
  );
}
