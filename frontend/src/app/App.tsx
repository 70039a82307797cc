import { lazy, Suspense } from 'react';
import { useTranslation } from 'react-i18next';
import { SessionProvider, useSession } from '../features/auth/SessionProvider';
import SignInPage from '../features/auth/SignInPage';
import { CatalogProvider } from '../features/catalog/CatalogProvider';
import { ToastProvider } from '../ui/toast';
import { ErrorBoundary } from './ErrorBoundary';
import { Link, useRoute } from './router';
import type { Route } from './routes';
import { TopBar } from './TopBar';

// Each page is its own chunk, fetched when first opened: the sign-in form (the first screen of a
// new visitor) loads none of them, and the canvas does not wait for the charts or the task views.
const EditorPage = lazy(() => import('../features/editor/EditorPage'));
const TasksPage = lazy(() => import('../features/tasks/TasksPage'));
const DatasetsPage = lazy(() => import('../features/datasets/DatasetsPage'));
const ModelsPage = lazy(() => import('../features/models/ModelsPage'));
const AccountPage = lazy(() => import('../features/account/AccountPage'));
const SweepsPage = lazy(() => import('../features/sweeps/SweepsPage'));

function Page({ route }: { route: Route }) {
  const { t } = useTranslation();
  switch (route.page) {
    case 'editor':
      return <EditorPage />;
    case 'tasks':
      return <TasksPage />;
    case 'sweeps':
      return (
        <Suspense fallback={<div className="editor-state">{t('sweeps.loading')}</div>}>
          <SweepsPage />
        </Suspense>
      );
    case 'datasets':
      return <DatasetsPage />;
    case 'models':
      return <ModelsPage />;
    case 'account':
      return <AccountPage />;
    case 'notFound':
      return (
        <section className="placeholder-page">
          <h1>{t('app.notFound')}</h1>
          <p>
            <code>{route.path}</code>
          </p>
          <Link href="/editor" className="btn btn--primary">
            {t('app.goEditor')}
          </Link>
        </section>
      );
  }
}

/** The routed page once someone is signed in; the sign-in form before. */
function Main({ route }: { route: Route }) {
  const { t } = useTranslation();
  const session = useSession();
  if (session.status === 'loading') return <div className="editor-state">{t('auth.checking')}</div>;
  if (session.status === 'error') {
    return (
      <div className="editor-state editor-state--error" role="alert">
        <p>{t('auth.unreachable', { message: session.error })}</p>
        <button type="button" className="btn btn--primary" onClick={session.retry}>
          {t('auth.retry')}
        </button>
      </div>
    );
  }
  if (session.status === 'signedOut') return <SignInPage />;
  return (
    // A page that throws shows its error; the top bar stays usable.
    <ErrorBoundary key={route.page}>
      <Suspense fallback={<div className="editor-state">{t('app.loadingPage')}</div>}>
        <Page route={route} />
      </Suspense>
    </ErrorBoundary>
  );
}

export default function App() {
  const route = useRoute();
  return (
    <ToastProvider>
      <SessionProvider>
        <CatalogProvider>
          <div className="app">
            <TopBar current={route.page === 'notFound' ? null : route.page} />
            <main className="app__main">
              <Main route={route} />
            </main>
          </div>
        </CatalogProvider>
      </SessionProvider>
    </ToastProvider>
  );
}
