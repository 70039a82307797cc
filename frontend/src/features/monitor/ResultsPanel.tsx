import { createElement, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { getReport, type TaskReport } from '../tasks/api';
import { PageState } from '../tasks/widgets';
import { useCatalog } from '../catalog/CatalogProvider';
import { asKind, kindEntry, resolveKind, type TaskKind } from '../catalog/taskKind';
import { resultView } from './resultViews';
import { errorText } from '../../i18n/errorText';

interface Props {
  taskId: string;
  status: string | null;
  /** The kind the task's graph or metrics say; the report's own "task" wins once it is loaded. */
  kind: TaskKind | null;
  /** Changes when the report may have appeared (the report artifact or the final status). */
  version: string;
}

export function ResultsPanel({ taskId, status, kind, version }: Props) {
  if (status === 'SUCCEEDED') return <FinishedResults taskId={taskId} kind={kind} version={version} />;
  return <NotFinished status={status} />;
}

function NotFinished({ status }: { status: string | null }) {
  const { t } = useTranslation();
  const message = status === 'FAILED' || status === 'STOPPED' ? t('monitor.noResults') : t('monitor.resultsLater');
  return <PageState kind="empty" message={message} />;
}

function FinishedResults({ taskId, kind, version }: { taskId: string; kind: TaskKind | null; version: string }) {
  const { t } = useTranslation();
  const [report, setReport] = useState<TaskReport | null>(null);
  // The reason itself, worded when shown: in the language of the moment.
  const [failure, setFailure] = useState<unknown>(null);
  const error = failure === null ? null : errorText(failure, t);

  useEffect(() => {
    let cancelled = false;
    getReport(taskId)
      .then((value) => {
        if (cancelled) return;
        setReport(value);
        setFailure(null);
      })
      .catch((reason: unknown) => {
        if (!cancelled) setFailure(reason);
      });
    return () => {
      cancelled = true;
    };
  }, [taskId, version]);

  const { index: catalog } = useCatalog();

  if (error) return <PageState kind="error" message={t('monitor.reportFailed', { message: error })} />;
  if (!report) return <PageState kind="loading" message={t('monitor.reportLoading')} />;

  // The view is the report's kind's (resultViews.ts); older reports name none.
  const reported = resolveKind(catalog, asKind(report.task, catalog), kind) ?? report.task ?? null;
  return createElement(resultView(reported), { report, kind: kindEntry(catalog, reported) });
}
