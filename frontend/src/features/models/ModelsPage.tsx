import { lazy, Suspense } from 'react';
import { useTranslation } from 'react-i18next';
import { useRoute } from '../../app/router';
import { PageState } from '../tasks/widgets';
import ModelList from './ModelList';

// The prediction page brings ECharts and, on demand, ONNX Runtime: loaded when a model is opened.
const PredictPage = lazy(() => import('./PredictPage'));

/** /models: the list with downloads; /models/:id: prediction with one model. */
export default function ModelsPage() {
  const { t } = useTranslation();
  const route = useRoute();
  const modelId = route.page === 'models' ? route.modelId : undefined;
  if (!modelId) return <ModelList />;
  return (
    <Suspense fallback={<PageState kind="loading" message={t('models.loading')} />}>
      <PredictPage key={modelId} modelId={modelId} />
    </Suspense>
  );
}
