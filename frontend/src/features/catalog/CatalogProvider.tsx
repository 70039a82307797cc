import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { fetchCatalog } from '../../api/catalog';
import { EMPTY_CATALOG, indexCatalog, type CatalogIndex } from './catalogIndex';
import { errorText } from '../../i18n/errorText';

export interface CatalogState {
  index: CatalogIndex;
  status: 'loading' | 'ready' | 'error';
  error: string | null;
  reload: () => void;
}

const CatalogContext = createContext<CatalogState>({
  index: EMPTY_CATALOG,
  status: 'loading',
  error: null,
  reload: () => undefined,
});

export function useCatalog(): CatalogState {
  return useContext(CatalogContext);
}

export function CatalogProvider({ children }: { children: ReactNode }) {
  const [index, setIndex] = useState<CatalogIndex>(EMPTY_CATALOG);
  const [status, setStatus] = useState<CatalogState['status']>('loading');
  const { t, i18n } = useTranslation();
  // The reason itself, worded when shown: in the language of the moment.
  const [failure, setFailure] = useState<unknown>(null);
  const error = failure === null ? null : errorText(failure, t);
  const [attempt, setAttempt] = useState(0);
  // The server sends the catalog's texts in one language: a new language means a new catalog.
  const lang = i18n.language === 'zh' ? 'zh' : 'en';

  useEffect(() => {
    let cancelled = false;
    fetchCatalog(lang)
      .then((payload) => {
        if (cancelled) return;
        setIndex(indexCatalog(payload.nodes, payload.task_kinds));
        setStatus('ready');
        setFailure(null);
      })
      .catch((reason: unknown) => {
        if (cancelled) return;
        setFailure(reason);
        setStatus('error');
      });
    return () => {
      cancelled = true;
    };
  }, [attempt, lang]);

  const reload = useCallback(() => {
    setStatus('loading');
    setAttempt((n) => n + 1);
  }, []);
  const value = useMemo(() => ({ index, status, error, reload }), [index, status, error, reload]);
  return <CatalogContext.Provider value={value}>{children}</CatalogContext.Provider>;
}
