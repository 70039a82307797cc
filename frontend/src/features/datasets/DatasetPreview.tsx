import { useCallback, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { EChart } from '../monitor/EChart';
import { PALETTE } from '../monitor/echarts';
import { usePolling } from '../tasks/usePolling';
import { PageState } from '../tasks/widgets';
import { getDataset, type DatasetDetail } from './api';
import { categorySummary } from './columns';

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

/** A column's first values, and how many it holds in all when that is more than are shown. */
function CategoryCell({ column }: { column: NonNullable<DatasetDetail['columns']>[number] }) {
  const { t, i18n } = useTranslation();
  const { shown, count, more } = categorySummary(column);
  return (
    <td className="muted" data-category-count={count}>
      <span translate="no">{shown.join(', ')}</span>
      {more > 0 && ` … ${t('datasets.categoryCount', { count, formatted: count.toLocaleString(i18n.language) })}`}
    </td>
  );
}

/** A table dataset: its rows and its columns (kind, missing values, categories). */
function TablePreview({ dataset, onClose }: { dataset: DatasetDetail; onClose: () => void }) {
  const { t, i18n } = useTranslation();
  const columns = dataset.columns ?? [];
  return (
    <section className="dataset-preview chart-card" aria-labelledby="preview-title" data-preview={dataset.id}>
      <header className="dataset-preview__head">
        <h2 id="preview-title">{dataset.name}</h2>
        <button type="button" className="icon-btn" aria-label={t('common.close')} onClick={onClose}>
          ×
        </button>
      </header>
      <dl className="facts facts--row">
        <div>
          <dt>{t('datasets.rows')}</dt>
          <dd>{dataset.count.toLocaleString(i18n.language)}</dd>
        </div>
        <div>
          <dt>{t('datasets.columns')}</dt>
          <dd>{columns.length}</dd>
        </div>
      </dl>
      <div className="per-class__scroll">
        <table className="wb-table wb-table--dense" data-table="columns">
          <thead>
            <tr>
              <th scope="col">{t('datasets.col.name')}</th>
              <th scope="col">{t('datasets.col.kind')}</th>
              <th scope="col" className="num">
                {t('datasets.missing')}
              </th>
              <th scope="col">{t('datasets.categories')}</th>
            </tr>
          </thead>
          <tbody>
            {columns.map((column) => (
              <tr key={column.name}>
                <th scope="row" translate="no">
                  {column.name}
                </th>
                <td>{t(`datasets.columnKind.${column.kind}`)}</td>
                <td className="num">{column.missing}</td>
                <CategoryCell column={column} />
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** One dataset: images per class (bar chart), sample thumbnails per class, image size statistics. */
export default function DatasetPreview({ datasetId, onClose }: { datasetId: string; onClose: () => void }) {
  const { t, i18n } = useTranslation();
  const fetcher = useCallback(() => getDataset(datasetId), [datasetId]);
  const detail = usePolling(fetcher, null, datasetId);
  const dataset = detail.data;
  const option = useMemo(() => (dataset ? countsOption(dataset, t('datasets.images')) : null), [dataset, t]);

  if (!dataset) {
    return detail.error ? (
      <PageState
        kind="error"
        message={t('datasets.previewFailed', { message: detail.error })}
        onRetry={detail.refresh}
      />
    ) : (
      <PageState kind="loading" message={t('datasets.loading')} />
    );
  }
  if (dataset.columns || !dataset.size_stats) return <TablePreview dataset={dataset} onClose={onClose} />;
  const { min, max, mean } = dataset.size_stats;
  const counts = dataset.classes.map((c) => c.count);
  const imbalance = Math.min(...counts) > 0 ? Math.max(...counts) / Math.min(...counts) : null;
  return (
    <section className="dataset-preview chart-card" aria-labelledby="preview-title" data-preview={dataset.id}>
      <header className="dataset-preview__head">
        <h2 id="preview-title">{dataset.name}</h2>
        <button type="button" className="icon-btn" aria-label={t('common.close')} onClick={onClose}>
          ×
        </button>
      </header>
      <dl className="facts facts--row">
        <div>
          <dt>{t('datasets.col.images')}</dt>
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
          {option && (
            <EChart
              option={option}
              label={t('datasets.chartLabel', { count: dataset.classes.length })}
              height={260}
              points={counts.length}
            />
          )}
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
    </section>
  );
}
