import { createElement, Suspense, useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { usePolling } from '../tasks/usePolling';
import { PageState } from '../tasks/widgets';
import { useCatalog } from '../catalog/CatalogProvider';
import { datasetInputType, previewOf } from '../inputs/registry';
import { getDataset } from './api';

/** One dataset: its name, and the preview its input type shows (features/inputs/registry.ts). */
export default function DatasetPreview({ datasetId, onClose }: { datasetId: string; onClose: () => void }) {
  const { t } = useTranslation();
  const { index: catalog } = useCatalog();
  const fetcher = useCallback(() => getDataset(datasetId), [datasetId]);
  const detail = usePolling(fetcher, null, datasetId);
  const dataset = detail.data;

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
  const type = datasetInputType(dataset, catalog);
  return (
    <section
      className="dataset-preview chart-card"
      aria-labelledby="preview-title"
      data-preview={dataset.id}
      data-input-type={type}
    >
      <header className="dataset-preview__head">
        <h2 id="preview-title">{dataset.name}</h2>
        <button type="button" className="icon-btn" aria-label={t('common.close')} onClick={onClose}>
          ×
        </button>
      </header>
      <Suspense fallback={<PageState kind="loading" message={t('datasets.loading')} />}>
        {createElement(previewOf(type), { dataset })}
      </Suspense>
    </section>
  );
}
