import { useCallback, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from '../../app/router';
import { pathFor } from '../../app/routes';
import { useNotify } from '../../ui/toast';
import { deleteTask, listTasks, type TaskPublic } from './api';
import {
  bestMetric,
  columnSortFor,
  elapsedSeconds,
  formatDuration,
  formatPercent,
  isActive,
  formatDate,
  sortTasks,
  TASK_LIST_SORTS,
  TASK_STATUSES,
  testScore,
  formatScore,
  type SortDirection,
  type SortKey,
  type TaskListSort,
  type TaskStatus,
} from './format';
import { TaskActions, useTaskActions } from './TaskActions';
import { useNow, usePolling } from './usePolling';
import { ConfirmDialog, PageState, ProgressBar, StatusBadge } from './widgets';
import { failureText } from './failureText';
import { queuedText } from './queuedText';

const PAGE_SIZE = 50;
const LIVE_MS = 3000;
const IDLE_MS = 15000;

interface Column {
  key: SortKey | null;
  label: string;
  className?: string;
}

export default function TaskCenter() {
  const { t, i18n } = useTranslation();
  const notify = useNotify();
  const [status, setStatus] = useState<TaskStatus | null>(null);
  const [order, setOrder] = useState<TaskListSort>('newest');
  const [page, setPage] = useState(0);
  const [sort, setSort] = useState<{ key: SortKey; direction: SortDirection }>(() => columnSortFor('newest'));
  const [toDelete, setToDelete] = useState<TaskPublic | null>(null);
  const [live, setLive] = useState(false);

  const fetcher = useCallback(() => listTasks(status, page * PAGE_SIZE, PAGE_SIZE, order), [status, page, order]);
  const polled = usePolling(fetcher, live ? LIVE_MS : IDLE_MS, `${status ?? 'all'}:${order}:${page}`);
  const tasks = useMemo(() => polled.data?.data ?? [], [polled.data]);
  const anyActive = tasks.some((task) => isActive(task.status));
  if (anyActive !== live) setLive(anyActive);
  const now = useNow(1000, anyActive);
  const sorted = useMemo(() => sortTasks(tasks, sort.key, sort.direction, now), [tasks, sort, now]);
  const actions = useTaskActions(polled.refresh);

  const columns: Column[] = [
    { key: 'name', label: t('tasks.col.name') },
    { key: 'status', label: t('tasks.col.status') },
    { key: 'progress', label: t('tasks.col.progress'), className: 'col-progress' },
    { key: 'duration', label: t('tasks.col.duration'), className: 'num' },
    { key: 'best', label: t('tasks.col.best'), className: 'num' },
    { key: null, label: t('tasks.col.test'), className: 'num' },
    { key: 'created', label: t('tasks.col.created') },
    { key: null, label: t('tasks.col.actions'), className: 'col-actions' },
  ];

  const toggleSort = (key: SortKey) =>
    setSort((current) =>
      current.key === key
        ? { key, direction: current.direction === 'asc' ? 'desc' : 'asc' }
        : { key, direction: key === 'name' ? 'asc' : 'desc' },
    );

  const count = polled.data?.count ?? 0;
  const first = count === 0 ? 0 : page * PAGE_SIZE + 1;
  const last = Math.min(count, (page + 1) * PAGE_SIZE);

  return (
    <section className="wb-page" aria-labelledby="tasks-title">
      <header className="wb-head">
        <h1 id="tasks-title">{t('tasks.title')}</h1>
        {polled.data && <span className="wb-head__count">{t('tasks.count', { count })}</span>}
        <span className={`live${anyActive ? ' is-on' : ''}`} title={t('tasks.liveHelp')}>
          <span className="live__dot" aria-hidden="true" />
          {anyActive ? t('tasks.live') : t('tasks.idle')}
        </span>
        <div className="wb-head__tools">
          <label className="inline-field">
            <span>{t('tasks.filter')}</span>
            <select
              value={status ?? ''}
              onChange={(event) => {
                setStatus((event.target.value || null) as TaskStatus | null);
                setPage(0);
              }}
            >
              <option value="">{t('tasks.all')}</option>
              {TASK_STATUSES.map((value) => (
                <option key={value} value={value}>
                  {t(`tasks.status.${value}`)}
                </option>
              ))}
            </select>
          </label>
          <label className="inline-field">
            <span>{t('tasks.sort')}</span>
            <select
              value={order}
              onChange={(event) => {
                const next = event.target.value as TaskListSort;
                setOrder(next);
                setSort(columnSortFor(next));
                setPage(0);
              }}
            >
              {TASK_LIST_SORTS.map((value) => (
                <option key={value} value={value}>
                  {t(`tasks.sortBy.${value}`)}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="btn" onClick={polled.refresh}>
            {t('tasks.refresh')}
          </button>
        </div>
      </header>

      {polled.error && (
        <p className="wb-error" role="alert">
          {t('tasks.loadFailed', { message: polled.error })}
        </p>
      )}
      {polled.loading && !polled.data && <PageState kind="loading" message={t('tasks.loading')} />}
      {polled.data && tasks.length === 0 && (
        <div className="page-state">
          <p>{status ? t('tasks.noneWithStatus', { status: t(`tasks.status.${status}`) }) : t('tasks.none')}</p>
          <Link href="/editor" className="btn btn--primary">
            {t('app.goEditor')}
          </Link>
        </div>
      )}

      {tasks.length > 0 && (
        <div className="wb-card wb-card--flush">
          <table className="wb-table tasks-table">
            <thead>
              <tr>
                {columns.map((column) => {
                  const active = column.key !== null && sort.key === column.key;
                  return (
                    <th
                      key={column.label}
                      className={column.className}
                      scope="col"
                      aria-sort={active ? (sort.direction === 'asc' ? 'ascending' : 'descending') : undefined}
                    >
                      {column.key ? (
                        <button type="button" className="th-sort" onClick={() => toggleSort(column.key!)}>
                          {column.label}
                          <span className="th-sort__arrow" aria-hidden="true">
                            {active ? (sort.direction === 'asc' ? '▲' : '▼') : '↕'}
                          </span>
                        </button>
                      ) : (
                        column.label
                      )}
                    </th>
                  );
                })}
              </tr>
            </thead>
            <tbody>
              {sorted.map((task) => {
                const best = bestMetric(task.best_metrics);
                return (
                  <tr key={task.id} data-task={task.id} data-status={task.status}>
                    <td className="col-name">
                      <Link href={pathFor('tasks', task.id)} className="row-link">
                        {task.name}
                      </Link>
                      {task.error && (
                        <span className="row-error" title={failureText(task.error, t, i18n.language)}>
                          {failureText(task.error, t, i18n.language)}
                        </span>
                      )}
                      {task.status === 'QUEUED' && task.queued_reason && (
                        <span className="row-waiting" data-reason={task.queued_reason.code}>
                          {queuedText(task.queued_reason, t)}
                        </span>
                      )}
                    </td>
                    <td>
                      <StatusBadge status={task.status} />
                    </td>
                    <td className="col-progress">
                      <div className="progress-cell">
                        <ProgressBar value={task.progress} label={t('tasks.progressOf', { name: task.name })} />
                        <span className="progress-cell__text">
                          {formatPercent(task.progress, 0)}
                          {task.epoch > 0 && ` · ${t('tasks.epochShort', { epoch: task.epoch })}`}
                        </span>
                      </div>
                    </td>
                    <td className="num">{formatDuration(elapsedSeconds(task, now))}</td>
                    <td className="num" title={best ? t(`tasks.metric.${best.key}`) : undefined}>
                      {formatScore(best)}
                    </td>
                    <td className="num">{formatScore(testScore(task.best_metrics))}</td>
                    <td className="col-date">{formatDate(task.created_at, i18n.language)}</td>
                    <td className="col-actions">
                      <TaskActions task={task} actions={actions} compact onDelete={() => setToDelete(task)} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}

      {count > PAGE_SIZE && (
        <nav className="pager" aria-label={t('tasks.pages')}>
          <span>{t('tasks.range', { first, last, count })}</span>
          <button type="button" className="btn" disabled={page === 0} onClick={() => setPage((p) => p - 1)}>
            {t('tasks.previous')}
          </button>
          <button type="button" className="btn" disabled={last >= count} onClick={() => setPage((p) => p + 1)}>
            {t('tasks.next')}
          </button>
        </nav>
      )}

      {toDelete && (
        <ConfirmDialog
          title={t('tasks.deleteTitle')}
          body={<p>{t('tasks.deleteBody', { name: toDelete.name })}</p>}
          confirmLabel={t('tasks.delete')}
          onClose={() => setToDelete(null)}
          onConfirm={async () => {
            await deleteTask(toDelete.id);
            notify({ kind: 'success', message: t('tasks.deleted', { name: toDelete.name }) });
            polled.refresh();
          }}
        />
      )}
      {actions.dialog}
    </section>
  );
}
