// One sweep: its settings and progress, stop/resume, the best trial (open in the editor, register
// its model), the charts (parallel coordinates, best so far, importance) and the trials table.
import { useCallback, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from '../../app/router';
import { pathFor } from '../../app/routes';
import { errorText } from '../../i18n/errorText';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { useNotify } from '../../ui/toast';
import { useCatalog } from '../catalog/CatalogProvider';
import { objectiveLabel, tooFewForImportance } from './objective';
import { canvasHasWork, openGraphInEditor } from '../tasks/openInEditor';
import { formatDuration } from '../tasks/format';
import { useNow, usePolling } from '../tasks/usePolling';
import { PageState, StatusBadge } from '../tasks/widgets';
import type { GraphSpec } from '../../api/types';
import { bestGraph, getSweep, registerBest, resumeSweep, stopSweep, type SweepDetail, type Trial } from './api';
import {
  bestSoFarOption,
  formatObjective,
  formatParam,
  importanceOption,
  isPercentObjective,
  lastValue,
  parallelOption,
  searchAxes,
  shownNumber,
  trialSeconds,
} from './charts';
import { EChart } from './echarts';
import { ParamNameText } from './ParamNameText';
import { type ParamName, paramLabeller, sweepParams } from './paramNames';
import { SweepStatus, trialsDone } from './SweepsPage';

const LIVE_MS = 3000;
const STATE_TONES: Record<Trial['state'], string> = {
  RUNNING: 'busy',
  COMPLETE: 'good',
  PRUNED: 'neutral',
  FAILED: 'bad',
  STOPPED: 'warn',
};

function TrialState({ state }: { state: Trial['state'] }) {
  const { t } = useTranslation();
  return (
    <span className={`badge badge--${STATE_TONES[state]}`} data-state={state}>
      <span className="badge__dot" aria-hidden="true" />
      {t(`sweeps.state.${state}`)}
    </span>
  );
}

/** A searched param's name (`node · Param title`) from its `node.param` key. */
type Labeller = (key: string) => string;

function Charts({ detail, paramName, objective }: { detail: SweepDetail; paramName: Labeller; objective: string }) {
  const { t } = useTranslation();
  const parallel = useMemo(
    () =>
      parallelOption(detail, {
        objective,
        state: (state) => t(`sweeps.state.${state}`),
        param: paramName,
      }),
    [detail, t, paramName, objective],
  );
  const best = useMemo(
    () =>
      bestSoFarOption(detail, {
        trial: t('sweeps.chart.trial'),
        value: objective,
        best: t('sweeps.chart.bestLine'),
        trials: t('sweeps.chart.trials'),
      }),
    [detail, t, objective],
  );
  const importance = useMemo(() => importanceOption(detail.importance, paramName), [detail.importance, paramName]);
  const lines = detail.trial_list.filter((trial) => trial.value !== null).length;
  const complete = detail.trial_list.filter((trial) => trial.state === 'COMPLETE' && trial.value !== null).length;
  const factors = Object.keys(detail.importance).length;
  return (
    <div className="sweep-charts">
      <section className="wb-card sweep-chart sweep-chart--wide" aria-labelledby="sweep-parallel">
        <h2 id="sweep-parallel">{t('sweeps.chart.parallel')}</h2>
        <p className="sweep-chart__help">{t('sweeps.chart.parallelHelp')}</p>
        <EChart
          option={parallel}
          label={t('sweeps.chart.parallel')}
          points={lines}
          height={300}
          className="sweep-parallel"
        />
      </section>
      <section className="wb-card sweep-chart" aria-labelledby="sweep-best">
        <h2 id="sweep-best">{t('sweeps.chart.best')}</h2>
        <p className="sweep-chart__help">{t('sweeps.chart.bestHelp')}</p>
        {complete ? (
          <EChart option={best} label={t('sweeps.chart.best')} points={complete} height={240} className="sweep-best" />
        ) : (
          <p className="sweep-chart__empty">{t('sweeps.chart.empty')}</p>
        )}
      </section>
      <section className="wb-card sweep-chart" aria-labelledby="sweep-importance">
        <h2 id="sweep-importance">{t('sweeps.chart.importance')}</h2>
        <p className="sweep-chart__help">{t('sweeps.chart.importanceHelp')}</p>
        {complete >= 2 && tooFewForImportance(detail) && (
          <p className="sweep-chart__caution" role="note" data-too-few={detail.importance_trials}>
            {t('sweeps.chart.tooFew', { count: detail.importance_trials, min: detail.importance_min_trials })}
          </p>
        )}
        {factors ? (
          <EChart
            option={importance}
            label={t('sweeps.chart.importance')}
            points={factors}
            height={Math.max(120, 44 * factors)}
            className="sweep-importance"
          />
        ) : (
          <p className="sweep-chart__empty">
            {complete >= 2 ? t('sweeps.chart.noSpread') : t('sweeps.chart.noImportance')}
          </p>
        )}
      </section>
    </div>
  );
}

function TrialsTable({ detail, now, names }: { detail: SweepDetail; now: number; names: readonly ParamName[] }) {
  const { t } = useTranslation();
  const axes = searchAxes(detail.search);
  const percent = isPercentObjective(detail.objective);
  const trials = [...detail.trial_list].sort((a, b) => a.number - b.number);
  return (
    <div className="wb-card wb-card--flush sweep-trials">
      <table className="wb-table wb-table--dense trials-table">
        <thead>
          <tr>
            <th scope="col" className="num">
              {t('sweeps.col.number')}
            </th>
            <th scope="col">{t('sweeps.col.state')}</th>
            {axes.map((axis) => {
              const name = names.find((candidate) => candidate.key === axis.key);
              return (
                <th key={axis.key} scope="col" className="num" data-param={axis.key}>
                  {name ? <ParamNameText name={name} /> : <span translate="no">{axis.key}</span>}
                </th>
              );
            })}
            <th scope="col" className="num">
              {t('sweeps.col.last')}
            </th>
            <th scope="col" className="num">
              {t('sweeps.col.value')}
            </th>
            <th scope="col" className="num">
              {t('sweeps.col.epochs')}
            </th>
            <th scope="col" className="num">
              {t('sweeps.col.duration')}
            </th>
            <th scope="col">{t('sweeps.col.task')}</th>
          </tr>
        </thead>
        <tbody>
          {trials.map((trial) => {
            const best = trial.number === detail.best_trial;
            return (
              <tr
                key={trial.number}
                data-trial={trial.number}
                data-state={trial.state}
                className={best ? 'is-best' : undefined}
              >
                <td className="num">
                  #{shownNumber(trial.number)}
                  {best && <span className="trial-best">{t('sweeps.bestBadge')}</span>}
                </td>
                <td>
                  <TrialState state={trial.state} />
                </td>
                {axes.map((axis) => (
                  <td key={axis.key} className="num" translate="no">
                    {formatParam(trial.params[axis.key])}
                  </td>
                ))}
                <td className="num">{formatObjective(lastValue(trial), percent)}</td>
                <td className="num">{formatObjective(trial.value, percent)}</td>
                <td className="num">{Object.keys(trial.intermediate).length}</td>
                <td className="num">{formatDuration(trialSeconds(trial, now))}</td>
                <td>
                  {trial.task_id ? (
                    <span className="trial-task">
                      {trial.task_status && <StatusBadge status={trial.task_status} />}
                      <Link href={pathFor('tasks', trial.task_id)} className="btn btn--small" data-action="trial-task">
                        {t('sweeps.openTask')}
                      </Link>
                    </span>
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function SweepDetailView({ sweepId }: { sweepId: string }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const fetcher = useCallback(() => getSweep(sweepId), [sweepId]);
  const [live, setLive] = useState(true);
  const polled = usePolling(fetcher, live ? LIVE_MS : null, sweepId);
  const detail = polled.data;
  const running = detail?.status === 'RUNNING';
  // The importance is computed off the request path once per settled trial: after the sweep ends,
  // the page keeps polling until it covers the last trials.
  const settled = detail ? detail.trial_list.filter((t) => t.state === 'COMPLETE' && t.value !== null).length : 0;
  const catchingUp = !!detail && !running && settled >= 2 && detail.importance_trials < settled;
  if (detail && (running || catchingUp) !== live) setLive(running || catchingUp);
  const now = useNow(1000, running);
  const [busy, setBusy] = useState<string | null>(null);
  const [pending, setPending] = useState<GraphSpec | null>(null);
  const catalog = useCatalog();
  const names = useMemo(() => (detail ? sweepParams(detail, catalog.index) : []), [detail, catalog.index]);
  const paramName = useMemo(() => paramLabeller(names), [names]);

  if (!detail) {
    if (polled.error) {
      return (
        <section className="wb-page">
          <PageState
            kind="error"
            message={t('sweeps.loadFailed', { message: polled.error })}
            onRetry={polled.refresh}
          />
        </section>
      );
    }
    return (
      <section className="wb-page">
        <PageState kind="loading" message={t('sweeps.loading')} />
      </section>
    );
  }

  const act = (name: string, work: () => Promise<void>, failure: string) => {
    setBusy(name);
    work()
      .then(polled.refresh)
      .catch((reason: unknown) => notify({ kind: 'error', message: t(failure, { message: errorText(reason, t) }) }))
      .finally(() => setBusy(null));
  };
  // The best graph opens named in the reader's language (the server words its name in English).
  const bestTrialNumber = shownNumber(detail.best_trial ?? 0);
  const openBest = () =>
    act(
      'open',
      async () => {
        const name = t('sweeps.bestGraphName', { sweep: detail.name, number: bestTrialNumber });
        const graph = { ...(await bestGraph(sweepId)), name };
        if (canvasHasWork()) setPending(graph);
        else if (!openGraphInEditor(graph, name)) throw new Error(t('tasks.storageFull'));
      },
      'sweeps.openFailed',
    );
  const register = () =>
    act(
      'register',
      async () => {
        const model = await registerBest(sweepId, t('sweeps.bestModelName', { sweep: detail.name }));
        notify({ kind: 'success', message: t('sweeps.registered', { name: model.name }) });
      },
      'sweeps.registerFailed',
    );
  const stop = () =>
    act(
      'stop',
      async () => {
        await stopSweep(sweepId);
        notify({ kind: 'info', message: t('sweeps.stopped', { name: detail.name }) });
      },
      'sweeps.actionFailed',
    );
  const resume = () =>
    act(
      'resume',
      async () => {
        await resumeSweep(sweepId);
        setLive(true);
        notify({ kind: 'success', message: t('sweeps.resumed', { name: detail.name }) });
      },
      'sweeps.actionFailed',
    );

  const counts = detail.counts;
  const percent = isPercentObjective(detail.objective);
  const done = trialsDone(counts);
  const hasBest = detail.best_trial !== null;
  return (
    <section
      className="wb-page sweep-page"
      aria-labelledby="sweep-title"
      data-sweep={detail.id}
      data-status={detail.status}
    >
      <nav className="crumbs" aria-label={t('monitor.breadcrumbs')}>
        <Link href={pathFor('sweeps')}>{t('sweeps.back')}</Link>
        <span aria-hidden="true">/</span>
        <span translate="no">{detail.name}</span>
      </nav>
      <header className="wb-head">
        <h1 id="sweep-title" translate="no">
          {detail.name}
        </h1>
        <SweepStatus status={detail.status} />
        <div className="wb-head__tools">
          {running ? (
            <button type="button" className="btn" onClick={stop} disabled={busy !== null} data-action="stop-sweep">
              {t('sweeps.stop')}
            </button>
          ) : (
            detail.status === 'STOPPED' && (
              <button
                type="button"
                className="btn"
                onClick={resume}
                disabled={busy !== null}
                data-action="resume-sweep"
              >
                {t('sweeps.resume')}
              </button>
            )
          )}
          {detail.best_model_id ? (
            <Link
              href={pathFor('models', detail.best_model_id)}
              className="btn"
              title={t('sweeps.registeredHelp')}
              data-action="registered-best"
            >
              {t('sweeps.registeredBest')}
            </Link>
          ) : (
            <button
              type="button"
              className="btn"
              onClick={register}
              disabled={!hasBest || busy !== null}
              title={hasBest ? undefined : t('sweeps.noBestYet')}
              data-action="register-best"
            >
              {t('sweeps.registerBest')}
            </button>
          )}
          <button
            type="button"
            className="btn btn--primary"
            onClick={openBest}
            disabled={!hasBest || busy !== null}
            title={hasBest ? undefined : t('sweeps.noBestYet')}
            data-action="open-best"
          >
            {t('sweeps.openBest')}
          </button>
        </div>
      </header>
      {polled.error && (
        <p className="wb-error" role="alert">
          {t('sweeps.loadFailed', { message: polled.error })}
        </p>
      )}
      <div className="sweep-summary">
        <div className="wb-card sweep-stat">
          <span className="sweep-stat__label">{t('sweeps.col.best')}</span>
          <strong className="sweep-stat__value" data-best={detail.best_value ?? ''}>
            {formatObjective(detail.best_value, percent)}
          </strong>
          <span className="sweep-stat__note">
            {hasBest ? t('sweeps.bestTrial', { number: shownNumber(detail.best_trial ?? 0) }) : t('sweeps.noBestYet')}
          </span>
        </div>
        <div className="wb-card sweep-stat">
          <span className="sweep-stat__label">{t('sweeps.col.trials')}</span>
          <strong className="sweep-stat__value">{t('sweeps.progress', { done, total: detail.trials })}</strong>
          <span className="sweep-stat__note">
            {t('sweeps.counts', {
              complete: counts.COMPLETE ?? 0,
              pruned: counts.PRUNED ?? 0,
              running: counts.RUNNING ?? 0,
            })}
          </span>
        </div>
        <div className="wb-card sweep-stat">
          <span className="sweep-stat__label">{t('sweeps.col.objective')}</span>
          <strong className="sweep-stat__value">{objectiveLabel(detail.objective, catalog.index, t)}</strong>
          <span className="sweep-stat__note">
            {t(`sweeps.direction.${detail.direction}`)} ·{' '}
            {t('sweeps.settings', {
              sampler: t(`sweeps.sampler.${detail.sampler}`),
              pruner: t(`sweeps.pruner.${detail.pruner}`),
              parallel: detail.parallel,
            })}
          </span>
        </div>
      </div>
      {detail.error && (
        <p className="wb-error" role="alert" translate="no">
          {detail.error}
        </p>
      )}
      <Charts detail={detail} paramName={paramName} objective={objectiveLabel(detail.objective, catalog.index, t)} />
      <TrialsTable detail={detail} now={now} names={names} />
      {pending && (
        <ConfirmDialog
          title={t('sweeps.replaceTitle')}
          body={<p>{t('sweeps.replaceBody', { name: detail.name })}</p>}
          confirmLabel={t('sweeps.replace')}
          danger={false}
          onClose={() => setPending(null)}
          onConfirm={async () => {
            if (!openGraphInEditor(pending, pending.name)) throw new Error(t('tasks.storageFull'));
          }}
        />
      )}
    </section>
  );
}
