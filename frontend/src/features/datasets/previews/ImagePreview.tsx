// An image dataset's preview (the input type registry's, features/inputs/registry.ts): images per
// class (bar chart), sample thumbnails per class, image size statistics.
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { EChart } from '../../monitor/EChart';
import { PALETTE } from '../../monitor/echarts';
import type { DatasetDetail } from '../api';
import type { PreviewProps } from '../../inputs/types';
import GenericPreview from './GenericPreview';

function countsOption(dataset: DatasetDetail, imagesLabel: string) {
  const names = dataset.classes.map((c) => c.name);
  return {
    animation: false,
    grid: { left: 56, right: 16, top: 24, bottom: names.length > 12 ? 64 : 36 },
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
    xAxis: {
      type: 'category',
      data: names,
      axisLabel: { color: '#667085', fontSize: 11, interval: 0, rotate: names.length > 12 ? 40 : 0 },
    },
    yAxis: {
      type: 'value',
      name: imagesLabel,
      nameTextStyle: { color: '#667085', fontSize: 11, align: 'left' },
      axisLabel: { color: '#667085', fontSize: 11 },
      splitLine: { lineStyle: { color: '#eef0f4' } },
    },
    series: [
      {
        type: 'bar',
        name: imagesLabel,
        data: dataset.classes.map((c) => c.count),
        itemStyle: { color: PALETTE[0], borderRadius: [3, 3, 0, 0] },
        barMaxWidth: 36,
        label: { show: names.length <= 20, position: 'top', fontSize: 11, color: '#475467' },
      },
    ],
  };
}

export default function ImagePreview({ dataset }: PreviewProps) {
  const { t, i18n } = useTranslation();
  const option = useMemo(() => countsOption(dataset, t('datasets.images')), [dataset, t]);
  if (!dataset.size_stats) return <GenericPreview dataset={dataset} />;
  const { min, max, mean } = dataset.size_stats;
  const counts = dataset.classes.map((c) => c.count);
  const imbalance = Math.min(...counts) > 0 ? Math.max(...counts) / Math.min(...counts) : null;
  return (
    <>
      <dl className="facts facts--row">
        <div>
          <dt>{t('inputs.countImages')}</dt>
          <dd>{dataset.count.toLocaleString(i18n.language)}</dd>
        </div>
        <div>
          <dt>{t('datasets.col.classes')}</dt>
          <dd>{dataset.classes.length}</dd>
        </div>
        <div>
          <dt>{t('datasets.channels')}</dt>
          <dd>{t(dataset.channels === 1 ? 'datasets.gray' : 'datasets.rgb')}</dd>
        </div>
        <div>
          <dt>{t('datasets.sizeMin')}</dt>
          <dd>{`${min[0]}×${min[1]}`}</dd>
        </div>
        <div>
          <dt>{t('datasets.sizeMax')}</dt>
          <dd>{`${max[0]}×${max[1]}`}</dd>
        </div>
        <div>
          <dt>{t('datasets.sizeMean')}</dt>
          <dd>{`${(mean[0] ?? 0).toFixed(1)}×${(mean[1] ?? 0).toFixed(1)}`}</dd>
        </div>
        <div title={t('datasets.balanceHelp')}>
          <dt>{t('datasets.balance')}</dt>
          <dd>{imbalance === null ? '—' : t('datasets.ratio', { ratio: imbalance.toFixed(1) })}</dd>
        </div>
      </dl>
      <p className="muted">{t('datasets.sizeNote')}</p>
      <div className="dataset-preview__grid">
        <figure className="chart-card" data-chart="class-counts">
          <figcaption>{t('datasets.perClass')}</figcaption>
          <EChart
            option={option}
            label={t('datasets.chartLabel', { count: dataset.classes.length })}
            height={260}
            points={counts.length}
          />
        </figure>
        <div className="chart-card samples">
          <h3>{t('datasets.samples')}</h3>
          <div className="samples__list">
            {dataset.classes.map((item) => (
              <div key={item.index} className="samples__class">
                <div className="samples__name">
                  <strong>{item.name}</strong> <span className="muted">{item.count}</span>
                </div>
                <div className="samples__thumbs">
                  {item.samples.map((url, i) => (
                    <img
                      key={url}
                      src={url}
                      alt={t('datasets.sampleAlt', { name: item.name, n: i + 1 })}
                      loading="lazy"
                    />
                  ))}
                </div>
              </div>
            ))}
          </div>
        </div>
      </div>
    </>
  );
}
