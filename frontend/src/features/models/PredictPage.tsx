import { createElement, Suspense, useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, navigate } from '../../app/router';
import { pathFor } from '../../app/routes';
import { useNotify } from '../../ui/toast';
import { formatScore, testScore } from '../tasks/format';
import { usePolling } from '../tasks/usePolling';
import { ConfirmDialog, PageState } from '../tasks/widgets';
import { modelInputType, predictOf } from '../inputs/registry';
import { deleteModel, getModel } from './api';
import { DownloadButtons } from './DownloadButtons';
import './models.css';

/** A model's page: its name and test score, downloads, and the prediction body of its input type
 * (features/inputs/registry.ts). */
export default function PredictPage({ modelId }: { modelId: string }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const fetchModel = useCallback(() => getModel(modelId), [modelId]);
  const model = usePolling(fetchModel, null, modelId);
  const [confirmDelete, setConfirmDelete] = useState(false);

  if (!model.data) {
    return model.error ? (
      <section className="wb-page">
        <nav className="crumbs">
          <Link href="/models">{t('models.title')}</Link>
        </nav>
        <PageState kind="error" message={t('models.loadFailed', { message: model.error })} onRetry={model.refresh} />
      </section>
    ) : (
      <PageState kind="loading" message={t('models.loading')} />
    );
  }

  const info = model.data;
  const score = testScore(info.metrics.test as Record<string, number> | undefined);
  const header = (
    <>
      <nav className="crumbs" aria-label={t('monitor.breadcrumbs')}>
        <Link href="/models">{t('models.title')}</Link>
        <span aria-hidden="true">/</span>
        <span>{info.name}</span>
      </nav>
      <header className="monitor__head">
        <div className="monitor__title">
          <h1 id="model-title">{info.name}</h1>
          <span className="pill">{t('models.testScore', { value: formatScore(score) })}</span>
        </div>
        <div className="actions">
          <DownloadButtons modelId={info.id} />
          <button type="button" className="btn btn--danger" onClick={() => setConfirmDelete(true)}>
            {t('models.delete')}
          </button>
        </div>
      </header>
    </>
  );
  const trainedBy = info.task_id && (
    <>
      {' · '}
      <Link href={pathFor('tasks', info.task_id)}>{t('models.trainedBy')}</Link>
    </>
  );
  const deleteDialog = confirmDelete && (
    <ConfirmDialog
      title={t('models.deleteTitle')}
      body={<p>{t('models.deleteBody', { name: info.name })}</p>}
      confirmLabel={t('models.delete')}
      onClose={() => setConfirmDelete(false)}
      onConfirm={async () => {
        await deleteModel(info.id);
        notify({ kind: 'success', message: t('models.deleted', { name: info.name }) });
        navigate('/models');
      }}
    />
  );

  // The body is the model's input type's (features/inputs/registry.ts).
  const type = modelInputType(info);
  return (
    <section className="wb-page predict" aria-labelledby="model-title" data-model={info.id} data-input={type}>
      {header}
      <Suspense fallback={<PageState kind="loading" message={t('models.loading')} />}>
        {createElement(predictOf(type), { model: info, trainedBy })}
      </Suspense>
      {deleteDialog}
    </section>
  );
}
