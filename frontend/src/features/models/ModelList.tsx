import { createElement, useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from '../../app/router';
import { pathFor } from '../../app/routes';
import { useNotify } from '../../ui/toast';
import { formatScore, testScore } from '../tasks/format';
import { formatDate } from '../tasks/format';
import { usePolling } from '../tasks/usePolling';
import { ConfirmDialog, PageState } from '../tasks/widgets';
import { deleteModel, listModels, type ModelPublic } from './api';
import { answerSummary } from './answerViews';
import { DownloadButtons } from './DownloadButtons';
import './models.css';

/** What the model answers, as its kind's view shows it (answerViews.ts). */
function AnswerSummary({ model }: { model: ModelPublic }) {
  return createElement(answerSummary(model.task), { model });
}

const REFRESH_MS = 15000;

export default function ModelList() {
  const { t, i18n } = useTranslation();
  const notify = useNotify();
  const [trials, setTrials] = useState(false);
  const fetchModels = useCallback(() => listModels(trials), [trials]);
  const models = usePolling(fetchModels, REFRESH_MS, `models-${trials}`);
  const [toDelete, setToDelete] = useState<ModelPublic | null>(null);
  const list = models.data?.data ?? [];
  const hidden = models.data?.hidden_trials ?? 0;

  return (
    <section className="wb-page" aria-labelledby="models-title">
      <header className="wb-head">
        <h1 id="models-title">{t('models.title')}</h1>
        {models.data && <span className="wb-head__count">{t('models.count', { count: list.length })}</span>}
        <div className="wb-head__tools">
          {(hidden > 0 || trials) && (
            <label className="inline-check models-trials" title={t('models.trialsHelp')}>
              <input type="checkbox" checked={trials} onChange={(event) => setTrials(event.target.checked)} />
              {trials ? t('models.trialsShown') : t('models.trialsHidden', { count: hidden })}
            </label>
          )}
          <button type="button" className="btn" onClick={models.refresh}>
            {t('tasks.refresh')}
          </button>
        </div>
      </header>
      {models.error && (
        <p className="wb-error" role="alert">
          {t('models.listFailed', { message: models.error })}
        </p>
      )}
      {models.loading && !models.data && <PageState kind="loading" message={t('models.loading')} />}
      {models.data && list.length === 0 && (
        <div className="page-state">
          <p>{t('models.none')}</p>
          <Link href="/tasks" className="btn btn--primary">
            {t('models.toTasks')}
          </Link>
        </div>
      )}
      {list.length > 0 && (
        <div className="wb-card wb-card--flush">
          <table className="wb-table models-table">
            <thead>
              <tr>
                <th scope="col">{t('models.col.name')}</th>
                <th scope="col">{t('models.col.task')}</th>
                <th scope="col" className="num">
                  {t('models.col.test')}
                </th>
                <th scope="col">{t('models.col.classes')}</th>
                <th scope="col">{t('models.col.created')}</th>
                <th scope="col">{t('models.col.downloads')}</th>
                <th scope="col" className="col-actions">
                  {t('models.col.actions')}
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((model) => (
                <tr key={model.id} data-model={model.id}>
                  <td className="col-name">
                    <Link href={pathFor('models', model.id)} className="row-link">
                      {model.name}
                    </Link>
                  </td>
                  <td>
                    {model.task_id ? (
                      <Link href={pathFor('tasks', model.task_id)}>{t('models.openTask')}</Link>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                  <td className="num">
                    {formatScore(testScore(model.metrics.test as Record<string, number> | undefined))}
                  </td>
                  <td>
                    <AnswerSummary model={model} />
                  </td>
                  <td className="col-date">{formatDate(model.created_at, i18n.language)}</td>
                  <td>
                    <DownloadButtons modelId={model.id} compact />
                  </td>
                  <td className="col-actions">
                    <div className="actions">
                      <Link
                        href={pathFor('models', model.id)}
                        className="btn btn--small btn--primary"
                        aria-label={`${t('models.predict')}: ${model.name}`}
                      >
                        {t('models.predict')}
                      </Link>
                      <button
                        type="button"
                        className="btn btn--small btn--danger"
                        onClick={() => setToDelete(model)}
                        aria-label={`${t('models.delete')}: ${model.name}`}
                      >
                        {t('models.delete')}
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {toDelete && (
        <ConfirmDialog
          title={t('models.deleteTitle')}
          body={<p>{t('models.deleteBody', { name: toDelete.name })}</p>}
          confirmLabel={t('models.delete')}
          onClose={() => setToDelete(null)}
          onConfirm={async () => {
            await deleteModel(toDelete.id);
            notify({ kind: 'success', message: t('models.deleted', { name: toDelete.name }) });
            models.refresh();
          }}
        />
      )}
    </section>
  );
}
