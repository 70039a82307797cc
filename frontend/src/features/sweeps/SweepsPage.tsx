// /sweeps: your sweeps; /sweeps/:id: one sweep's trials, charts and best result. Loaded lazily
// (it brings ECharts), refreshed every few seconds while a sweep runs, as the task center is.
import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useRoute } from '../../app/router';
import { pathFor } from '../../app/routes';
import { formatDate } from '../tasks/format';
import { usePolling } from '../tasks/usePolling';
import { PageState } from '../tasks/widgets';
import { listSweeps, type SweepSummary } from './api';
import { useCatalog } from '../catalog/CatalogProvider';
import { formatObjective, isPercentObjective } from './charts';
import { objectiveLabel } from './objective';
import { SweepDetailView } from './SweepDetail';
import './sweeps.css';

const LIVE_MS = 3000;
const IDLE_MS = 15000;

const TONES: Record<SweepSummary['status'], string> = {
  RUNNING: 'busy',
  SUCCEEDED: 'good',
  STOPPED: 'warn',
  FAILED: 'bad',
};

export function SweepStatus({ status }: { status: SweepSummary['status'] }) {
  const { t } = useTranslation();
  return (
    <span className={`badge badge--${TONES[status]}`} data-status={status}>
      <span className="badge__dot" aria-hidden="true" />
      {t(`sweeps.status.${status}`)}
    </span>
  );
}

/** Trials that have ended, of any state: what the budget has spent. */
export const trialsDone = (counts: Record<string, number>) =>
  Object.entries(counts).reduce((sum, [state, n]) => (state === 'RUNNING' ? sum : sum + n), 0);

function SweepList() {
  const { t, i18n } = useTranslation();
  const catalog = useCatalog();
  const [live, setLive] = useState(false);
  const fetcher = useCallback(() => listSweeps(), []);
  // While a sweep runs, refresh as often as the task center does for running tasks.
  const polled = usePolling(fetcher, live ? LIVE_MS : IDLE_MS, 'sweeps');
  const shown = polled.data?.data ?? [];
  const running = shown.some((sweep) => sweep.status === 'RUNNING');
  if (running !== live) setLive(running);
  return (
    <section className="wb-page" aria-labelledby="sweeps-title">
      <header className="wb-head">
        <h1 id="sweeps-title">{t('sweeps.title')}</h1>
        {polled.data && <span className="wb-head__count">{t('sweeps.count', { count: polled.data.count })}</span>}
        <span className={`live${live ? ' is-on' : ''}`}>
          <span className="live__dot" aria-hidden="true" />
          {live ? t('tasks.live') : t('tasks.idle')}
        </span>
        <div className="wb-head__tools">
          <button type="button" className="btn" onClick={polled.refresh}>
            {t('tasks.refresh')}
          </button>
        </div>
      </header>
      {polled.error && (
        <p className="wb-error" role="alert">
          {t('sweeps.loadFailed', { message: polled.error })}
        </p>
      )}
      {polled.loading && !polled.data && <PageState kind="loading" message={t('sweeps.loading')} />}
      {polled.data && shown.length === 0 && (
        <div className="page-state">
          <p>{t('sweeps.none')}</p>
          <Link href="/editor" className="btn btn--primary">
            {t('app.goEditor')}
          </Link>
        </div>
      )}
      {shown.length > 0 && (
        <div className="wb-card wb-card--flush">
          <table className="wb-table sweeps-table">
            <thead>
              <tr>
                <th scope="col">{t('sweeps.col.name')}</th>
                <th scope="col">{t('sweeps.col.status')}</th>
                <th scope="col">{t('sweeps.col.trials')}</th>
                <th scope="col">{t('sweeps.col.objective')}</th>
                <th scope="col" className="num">
                  {t('sweeps.col.best')}
                </th>
                <th scope="col">{t('sweeps.col.created')}</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((sweep) => (
                <tr key={sweep.id} data-sweep={sweep.id} data-status={sweep.status}>
                  <td className="col-name">
                    <Link href={pathFor('sweeps', sweep.id)} className="row-link">
                      {sweep.name}
                    </Link>
                  </td>
                  <td>
                    <SweepStatus status={sweep.status} />
                  </td>
                  <td>{t('sweeps.progress', { done: trialsDone(sweep.counts), total: sweep.trials })}</td>
                  <td>{objectiveLabel(sweep.objective, catalog.index, t)}</td>
                  <td className="num">{formatObjective(sweep.best_value, isPercentObjective(sweep.objective))}</td>
                  <td className="col-date">{formatDate(sweep.created_at, i18n.language)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export default function SweepsPage() {
  const route = useRoute();
  const sweepId = route.page === 'sweeps' ? route.sweepId : undefined;
  return sweepId ? <SweepDetailView key={sweepId} sweepId={sweepId} /> : <SweepList />;
}
