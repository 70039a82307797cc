import { lazy, Suspense } from 'react';
import { useTranslation } from 'react-i18next';
import { useRoute } from '../../app/router';
import TaskCenter from './TaskCenter';
import { PageState } from './widgets';

// The monitor brings ECharts: loaded when a task is opened, not with the editor.
const MonitorPage = lazy(() => import('../monitor/MonitorPage'));

/** /tasks: the task center; /tasks/:id: the live monitor of one task. */
export default function TasksPage() {
  const { t } = useTranslation();
  const route = useRoute();
  const taskId = route.page === 'tasks' ? route.taskId : undefined;
  if (!taskId) return <TaskCenter />;
  return (
    <Suspense fallback={<PageState kind="loading" message={t('tasks.loading')} />}>
      <MonitorPage key={taskId} taskId={taskId} />
    </Suspense>
  );
}
