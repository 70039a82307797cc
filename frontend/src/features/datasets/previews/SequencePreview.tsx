// A sequence set's preview (the input type registry's, features/inputs/registry.ts): its counts,
// lengths and features, and small line plots of a few sample series per class (per range of the
// target for numeric targets), as the dataset detail's `series` sends them.
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { EChart } from '../../monitor/EChart';
import type { SequenceSummary } from '../../inputs/registry';
import { asSequencePreview, linesOption, samplePoints, type PreviewGroup } from '../../inputs/sequencePlots';
import type { PreviewProps } from '../../inputs/types';
import GenericPreview from './GenericPreview';
import '../../inputs/inputs.css';

function formatNumber(value: number, language: string): string {
  return value.toLocaleString(language, { maximumSignificantDigits: 4 });
}

function GroupPlot({ group, position, count }: { group: PreviewGroup; position: number; count: number }) {
  const { t, i18n } = useTranslation();
  const option = useMemo(
    () =>
      linesOption(group.samples.map(samplePoints), {
        feature: (index) => t('inputs.feature', { n: index + 1 }),
        step: t('inputs.step'),
      }),
    [group, t],
  );
  const targets = group.samples.map((sample) => sample.target).filter((value) => value !== null);
  const title =
    group.name ??
    (targets.length
      ? t('inputs.targetRange', {
          low: formatNumber(Math.min(...targets), i18n.language),
          high: formatNumber(Math.max(...targets), i18n.language),
        })
      : t('inputs.group', { n: position + 1 }));
  return (
    <figure className="chart-card seq-plot" data-chart="sequence-samples" data-group={group.name ?? position}>
      <figcaption>
        <strong translate={group.name ? 'no' : undefined}>{title}</strong>
        {count > 0 && <span className="muted"> {count.toLocaleString(i18n.language)}</span>}
      </figcaption>
      <EChart
        option={option}
        label={t('inputs.plotLabel', { count: group.samples.length, name: title })}
        height={140}
        points={group.samples.reduce((sum, sample) => sum + sample.values.reduce((n, v) => n + v.length, 0), 0)}
      />
    </figure>
  );
}

export default function SequencePreview({ dataset }: PreviewProps) {
  const { t, i18n } = useTranslation();
  const preview = asSequencePreview((dataset as { series?: unknown }).series);
  const described = (dataset as { sequence?: SequenceSummary | null }).sequence ?? null;
  if (!preview) return <GenericPreview dataset={dataset} />;
  const length = described?.length;
  const counts = new Map(dataset.classes.map((item) => [item.name, item.count]));
  return (
    <>
      <dl className="facts facts--row">
        <div>
          <dt>{t('inputs.sequences')}</dt>
          <dd>{dataset.count.toLocaleString(i18n.language)}</dd>
        </div>
        {dataset.classes.length > 0 && (
          <div>
            <dt>{t('datasets.col.classes')}</dt>
            <dd>{dataset.classes.length}</dd>
          </div>
        )}
        {described?.targets && (
          <div>
            <dt>{t('inputs.targets')}</dt>
            <dd>
              {`${formatNumber(described.targets.min, i18n.language)} … ${formatNumber(described.targets.max, i18n.language)}`}
            </dd>
          </div>
        )}
        {length && (
          <div>
            <dt>{t('inputs.length')}</dt>
            <dd data-length={`${length.min}-${length.max}`}>
              {length.min === length.max ? length.min : `${length.min} … ${length.max}`}
            </dd>
          </div>
        )}
        <div>
          <dt>{t('inputs.features')}</dt>
          <dd>{preview.features}</dd>
        </div>
        {described && (
          <div>
            <dt>{t('inputs.lengths')}</dt>
            <dd>{t(described.equal_length ? 'inputs.lengthsEqual' : 'inputs.lengthsVary')}</dd>
          </div>
        )}
        {described?.test_count != null && (
          <div>
            <dt>{t('inputs.testSet')}</dt>
            <dd>{described.test_count.toLocaleString(i18n.language)}</dd>
          </div>
        )}
      </dl>
      <p className="muted">
        {t('inputs.plotNote', {
          shown: preview.features_shown,
          features: preview.features,
          points: preview.max_points,
        })}
      </p>
      <div className="seq-plots">
        {preview.groups.map((group, i) => (
          <GroupPlot
            key={group.name ?? i}
            group={group}
            position={i}
            count={group.name === null ? 0 : (counts.get(group.name) ?? 0)}
          />
        ))}
      </div>
    </>
  );
}
