import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { fetchCatalog } from '../../api/endpoints';
import { EMPTY_CATALOG, indexCatalog, type CatalogIndex } from './catalogIndex';

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
  const [error, setError] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let cancelled = false;
    setStatus('loading');
    fetchCatalog()
      .then((entries) => {
        if (cancelled) return;
        setIndex(indexCatalog(entries));
        setStatus('ready');
        setError(null);
      })
      .catch((reason: unknown) => {
        if (cancelled) return;
        setError(reason instanceof Error ? reason.message : String(reason));
        setStatus('error');
      });
    return () => {
      cancelled = true;
    };
  }, [attempt]);

  const reload = useCallback(() => setAttempt((n) => n + 1), []);
  const value = useMemo(() => ({ index, status, error, reload }), [index, status, error, reload]);
  return <CatalogContext.Provider value={value}>{children}</CatalogContext.Provider>;
}
