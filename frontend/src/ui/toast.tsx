import { createContext, useCallback, useContext, useMemo, useRef, useState, type ReactNode } from 'react';

export type ToastKind = 'info' | 'success' | 'error';

interface Toast {
  id: number;
  kind: ToastKind;
  title?: string;
  message: string;
}

type Notify = (toast: { kind?: ToastKind; title?: string; message: string }) => void;

const ToastContext = createContext<Notify>(() => undefined);

export function useNotify(): Notify {
  return useContext(ToastContext);
}

const LIFETIME_MS = { info: 4000, success: 3000, error: 7000 } as const;

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const nextId = useRef(1);

  const dismiss = useCallback((id: number) => setToasts((list) => list.filter((toast) => toast.id !== id)), []);

  const notify = useCallback<Notify>(
    ({ kind = 'info', title, message }) => {
      const id = nextId.current++;
      setToasts((list) => {
        // The same message twice in a row (a refused connection tried again) is shown once.
        const rest = list.filter((toast) => toast.message !== message).slice(-3);
        return [...rest, { id, kind, title, message }];
      });
      window.setTimeout(() => dismiss(id), LIFETIME_MS[kind]);
    },
    [dismiss],
  );

  const value = useMemo(() => notify, [notify]);
  return (
    <ToastContext.Provider value={value}>
      {children}
      <div className="toasts" aria-live="polite" aria-relevant="additions">
        {toasts.map((toast) => (
          <div
            key={toast.id}
            className={`toast toast--${toast.kind}`}
            role={toast.kind === 'error' ? 'alert' : 'status'}
          >
            <div className="toast__body">
              {toast.title && <strong className="toast__title">{toast.title}</strong>}
              <span className="toast__message">{toast.message}</span>
            </div>
            <button type="button" className="toast__close" aria-label="Dismiss" onClick={() => dismiss(toast.id)}>
              ×
            </button>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}
