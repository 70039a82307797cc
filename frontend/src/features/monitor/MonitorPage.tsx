import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, navigate } from '../../app/router';
import { pathFor } from '../../app/routes';
import { modelOfTask } from '../models/api';
import { useNotify } from '../../ui/toast';
import { deleteTask, getTask } from '../tasks/api';
import { elapsedSeconds, formatDuration, formatNumber, formatPercent, isActive, isFinal } from '../tasks/format';
import { TaskActions, useTaskActions } from '../tasks/TaskActions';
import { formatDate } from '../tasks/format';
import { useNow, usePolling } from '../tasks/usePolling';
import { ConfirmDialog, PageState, ProgressBar, StatusBadge } from '../tasks/widgets';
import { CurvesPanel } from './CurvesPanel';
import { ConfigPanel, GraphPanel } from './GraphPanel';
import { LogPanel } from './LogPanel';
import { ResultsPanel } from './ResultsPanel';
import { useCatalog } from '../catalog/CatalogProvider';
import { bestEpoch, watchedMetric } from './bestEpoch';
import { chartedMetrics, graphKind, headlineMetric, kindFromMetrics, resolveKind } from '../catalog/taskKind';
import {
  bestEpochValue,
  buildSeries,
  currentStep,
  latestEpochValue,
  metricCurves,
  metricKeys,
  progressShare,
} from './series';
import { useTaskEvents, type Connection } from './useTaskEvents';
import { statusNotes } from './statusLine';
import { fastPathDecided, fastPathLine } from './fastPath';
import { workersLine, workersSummary } from './workers';
import './monitor.css';
import { failureText } from '../tasks/failureText';
import { queuedText } from '../tasks/queuedText';

const TABS = ['curves', 'results', 'graph', 'config', 'log'] as const;
type Tab = (typeof TABS)[number];
const DETAIL_MS = 3000;

function Kpi({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="kpi" data-kpi={testId}>
      <span className="kpi__label">{label}</span>
      <span className="kpi__value">{value}</span>
    </div>
  );
}

function ConnectionDot({ connection }: { connection: Connection }) {
  const { t } = useTranslation();
  return (
    <span className={`live conn--${connection}${connection === 'live' ? ' is-on' : ''}`} data-connection={connection}>
      <span className="live__dot" aria-hidden="true" />
      {t(`monitor.connection.${connection}`)}
    </span>
  );
}

const MODEL_TRIES = 5;
const MODEL_RETRY_MS = 2000;

/** A finished run's model, one click away: its prediction page. */
function PredictLink({ taskId, succeeded }: { taskId: string; succeeded: boolean }) {
  const { t } = useTranslation();
  const [modelId, setModelId] = useState<string | null>(null);
  useEffect(() => {
    if (!succeeded) return;
    let cancelled = false;
    let timer = 0;
    // The model is registered as the run ends: look again for a moment if it is not there yet.
    const look = (tries: number) => {
      modelOfTask(taskId)
        .then((model) => {
          if (cancelled) return;
          if (model) setModelId(model.id);
          else if (tries > 1) timer = window.setTimeout(() => look(tries - 1), MODEL_RETRY_MS);
        })
        .catch(() => undefined);
    };
    look(MODEL_TRIES);
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
    };
  }, [taskId, succeeded]);
  if (!succeeded || !modelId) return null;
  return (
    <Link href={pathFor('models', modelId)} className="btn btn--primary" data-action="predict">
      {t('monitor.predict')}
    </Link>
  );
}

export default function MonitorPage({ taskId }: { taskId: string }) {
  const { t, i18n } = useTranslation();
  // "cpu", "cuda:0" are hardware names, written as such; "auto" is a choice still to be made.
  const deviceName = (device: string) => (device === 'auto' ? t('monitor.deviceAuto') : device.toUpperCase());
  const notify = useNotify();
  const [tab, setTab] = useState<Tab>('curves');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const tabRefs = useRef<Record<string, HTMLButtonElement | null>>({});

  const fetchDetail = useCallback(() => getTask(taskId), [taskId]);
  const [detailActive, setDetailActive] = useState(true);
  const detail = usePolling(fetchDetail, detailActive ? DETAIL_MS : null, taskId);
  const task = detail.data;
  const { state, connection, resume } = useTaskEvents(taskId, task !== null);
  const status = state.status ?? task?.status ?? null;
  const active = isActive(status);
  if (task && isActive(task.status) !== detailActive) setDetailActive(isActive(task.status));

  // The events say first when the status changes: fetch the task again for its timings and scores.
  const lastStatus = useRef<string | null>(null);
  const refreshDetail = detail.refresh;
  useEffect(() => {
    if (state.status && state.status !== lastStatus.current) {
      lastStatus.current = state.status;
      refreshDetail();
    }
  }, [state.status, refreshDetail]);
  // A retry re-queues a finished task: follow its events again, once a task fetched after the
  // stream ended says it is active (the one on screen when it ended may predate the end).
  const endedWith = useRef<unknown>(null);
  const shown = useRef(detail.data);
  useLayoutEffect(() => {
    shown.current = detail.data;
  }, [detail.data]);
  useEffect(() => {
    if (connection === 'ended') endedWith.current = shown.current;
  }, [connection]);
  useEffect(() => {
    if (connection === 'ended' && task && task !== endedWith.current && isActive(task.status)) resume();
  }, [connection, task, resume]);

  const actions = useTaskActions(detail.refresh);
  const now = useNow(1000, active);
  const series = useMemo(() => buildSeries(state), [state]);
  // The kind the graph's train node names; before the catalog has come (or from an older
  // server), the metrics the run reports say it.
  const { index: catalog } = useCatalog();
  const graph = task?.graph;
  const reported = useMemo(() => kindFromMetrics(metricKeys(state), catalog), [state, catalog]);
  const kind = resolveKind(catalog, graph ? graphKind(graph, catalog) : null, reported);
  const metrics = useMemo(() => chartedMetrics(catalog, kind), [catalog, kind]);
  const curves = useMemo(
    () => Object.fromEntries(metrics.map((metric) => [metric.key, metricCurves(state, metric.key)])),
    [state, metrics],
  );

  if (!task) {
    if (detail.error) {
      return (
        <section className="wb-page">
          <nav className="crumbs">
            <Link href="/tasks">{t('tasks.title')}</Link>
          </nav>
          <PageState
            kind="error"
            message={t('monitor.loadFailed', { message: detail.error })}
            onRetry={detail.refresh}
          />
        </section>
      );
    }
    return <PageState kind="loading" message={t('tasks.loading')} />;
  }

  const share = Math.max(progressShare(state) ?? 0, task.progress);
  const epochs = state.epochs ?? (typeof task.config.epochs === 'number' ? task.config.epochs : null);
  const position = currentStep(state);
  const epochNow = Math.max(position?.epoch ?? 0, task.epoch);
  const headline = headlineMetric(catalog, kind);
  const formatHeadline = (value: number | null | undefined) =>
    headline.percent ? formatPercent(value) : formatNumber(value);
  // The runner's best_metrics keeps the highest value of every score: right for accuracy and R²,
  // which are the headline metrics (higher is better); the events are the fallback.
  const bestVal =
    bestEpochValue(state, `val_${headline.key}`, headline.higherIsBetter) ?? task.best_metrics[`val_${headline.key}`];
  // The best epoch is the one the trainer keeps (report.json's best_epoch): by the metric the
  // train node watches, in that metric's direction, not by the headline.
  const best = bestEpoch(state, watchedMetric(graph, catalog, kind));
  const memory = series.peakMemory.reduce((max, [, v]) => Math.max(max, v), 0);
  const testHeadline = state.test?.[`test_${headline.key}`] ?? task.best_metrics[`test_${headline.key}`];
  // A data-parallel run's processes (null for a run in one process, which shows as before).
  const workers = workersSummary(state.start, t);
  const workerList = workersLine(state.start, t);
  const error =
    task.error ??
    (state.error && status === 'FAILED'
      ? { code: state.error.code ?? '', message: state.error.message, node_id: null }
      : null);

  const onTabKey = (event: KeyboardEvent<HTMLDivElement>) => {
    const index = TABS.indexOf(tab);
    const move = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    if (!move) return;
    event.preventDefault();
    const next = TABS[(index + move + TABS.length) % TABS.length]!;
    setTab(next);
    tabRefs.current[next]?.focus();
  };

  return (
    <section className="wb-page monitor" aria-labelledby="monitor-title" data-task={task.id} data-status={status ?? ''}>
      <nav className="crumbs" aria-label={t('monitor.breadcrumbs')}>
        <Link href="/tasks">{t('tasks.title')}</Link>
        <span aria-hidden="true">/</span>
        <span>{task.name}</span>
      </nav>
      <header className="monitor__head">
        <div className="monitor__title">
          <h1 id="monitor-title">{task.name}</h1>
          <StatusBadge status={status ?? task.status} />
          <ConnectionDot connection={connection} />
        </div>
        <div className="monitor__actions">
          <PredictLink taskId={task.id} succeeded={status === 'SUCCEEDED'} />
          <TaskActions
            task={{ ...task, status: status ?? task.status, error }}
            actions={actions}
            onDelete={() => setConfirmDelete(true)}
          />
        </div>
      </header>
      <p className="monitor__meta muted">
        {t('monitor.meta', {
          created: formatDate(task.created_at, i18n.language),
          device: deviceName(String(state.start?.device ?? task.config.device ?? '—')),
        })}
        {workers && ` · ${workers}`}
        {/* A resume the user asked for is no failure: only crash retries are counted. */}
        {task.retries > 0 && ` · ${t('monitor.retry', { retry: task.retries, max: task.max_retries })}`}
        {statusNotes(
          {
            status,
            statusMessage: state.statusMessage ?? null,
            resumedFromEpoch:
              typeof state.start?.resumed_from_epoch === 'number' ? state.start.resumed_from_epoch : null,
            epoch: epochNow,
            epochs,
          },
          t,
          i18n.language,
        ).map((note) => ` · ${note}`)}
        {status === 'QUEUED' && task.queued_reason && (
          <span className="monitor__waiting" data-reason={task.queued_reason.code}>
            {` · ${queuedText(task.queued_reason, t)}`}
          </span>
        )}
      </p>

      <div className="monitor__progress">
        <ProgressBar value={share} label={t('monitor.progressLabel')} />
        <span className="monitor__progress-text" data-progress={share.toFixed(3)}>
          {formatPercent(share, 0)}
          {epochs ? ` · ${t('monitor.epochOf', { epoch: Math.min(epochNow || 1, epochs), epochs })}` : ''}
          {position && state.stepsPerEpoch && !isFinal(status)
            ? ` · ${t('monitor.stepOf', { step: position.step, steps: state.stepsPerEpoch })}`
            : ''}
          {` · ${formatDuration(elapsedSeconds(task, now))}`}
        </span>
      </div>

      {error && (
        <div className="monitor__error" role="alert">
          <strong>{t('monitor.failedTitle')}</strong> {failureText(error, t, i18n.language)}
          {error.code && <code translate="no">{error.code}</code>}
          {error.node_id && <span className="muted"> · {t('monitor.node', { node: error.node_id })}</span>}
        </div>
      )}

      <div className="kpis">
        <Kpi label={t(`monitor.bestValOf.${headline.key}`)} value={formatHeadline(bestVal)} testId="best-val" />
        {best ? (
          <Kpi
            label={t('monitor.valLossAt', { epoch: best.epoch })}
            value={formatNumber(best.loss)}
            testId="best-loss"
          />
        ) : (
          <Kpi label={t('monitor.valLoss')} value={formatNumber(latestEpochValue(state, 'val_loss'))} />
        )}
        <Kpi
          label={t(`monitor.testOf.${headline.key}`)}
          value={formatHeadline(testHeadline)}
          testId={`test-${headline.key}`}
        />
        <Kpi label={t('monitor.samplesPerS')} value={formatNumber(latestEpochValue(state, 'samples_per_s'))} />
        <Kpi label={t('monitor.epochTime')} value={formatDuration(latestEpochValue(state, 'epoch_time_s'))} />
        <Kpi label={t('monitor.peakMemory')} value={memory ? `${Math.round(memory)} MiB` : '—'} />
        <Kpi
          label={t('monitor.lrNow')}
          value={formatNumber(latestEpochValue(state, 'lr') ?? state.steps[state.steps.length - 1]?.values.lr)}
        />
      </div>

      <div className="tabs" role="tablist" aria-label={t('monitor.sections')} onKeyDown={onTabKey}>
        {TABS.map((name) => (
          <button
            key={name}
            ref={(el) => {
              tabRefs.current[name] = el;
            }}
            type="button"
            role="tab"
            id={`tab-${name}`}
            aria-selected={tab === name}
            aria-controls={`panel-${name}`}
            tabIndex={tab === name ? 0 : -1}
            className={`tab${tab === name ? ' is-active' : ''}`}
            onClick={() => setTab(name)}
          >
            {t(`monitor.tab.${name}`)}
            {name === 'results' && status === 'SUCCEEDED' && <span className="tab__dot" aria-hidden="true" />}
          </button>
        ))}
      </div>
      <div className="tabpanel" role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === 'curves' && (
          <CurvesPanel
            taskId={task.id}
            taskName={task.name}
            series={series}
            metrics={metrics}
            curves={curves}
            epochs={epochs}
          />
        )}
        {tab === 'results' && (
          <ResultsPanel taskId={task.id} status={status} kind={kind} version={`${state.artifacts.join()}:${status}`} />
        )}
        {tab === 'graph' && <GraphPanel graph={task.graph} />}
        {tab === 'config' && (
          <ConfigPanel
            config={task.config}
            graph={task.graph}
            decided={fastPathDecided(state.start?.fast_path, t)}
            extra={{
              id: task.id,
              graph_id: task.graph_id,
              priority: task.priority,
              resources: task.resources,
              attempts: task.retries > 0 ? `${task.retries} / ${task.max_retries}` : t('monitor.noRetries'),
              started_at: formatDate(task.started_at, i18n.language),
              finished_at: formatDate(task.finished_at, i18n.language),
              trainable_parameters: state.start?.trainable_parameters ?? null,
              train_samples: state.start?.train_samples ?? null,
              val_samples: state.start?.val_samples ?? null,
              test_samples: state.start?.test_samples ?? null,
              fast_path: fastPathLine(state.start?.fast_path, t),
              ...(workerList ? { workers: workerList } : {}),
            }}
          />
        )}
        {tab === 'log' && <LogPanel taskId={task.id} active={active} />}
      </div>

      {confirmDelete && (
        <ConfirmDialog
          title={t('tasks.deleteTitle')}
          body={<p>{t('tasks.deleteBody', { name: task.name })}</p>}
          confirmLabel={t('tasks.delete')}
          onClose={() => setConfirmDelete(false)}
          onConfirm={async () => {
            await deleteTask(task.id);
            notify({ kind: 'success', message: t('tasks.deleted', { name: task.name }) });
            navigate('/tasks');
          }}
        />
      )}
      {actions.dialog}
    </section>
  );
}
