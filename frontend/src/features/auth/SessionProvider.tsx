// Who is signed in (GET /api/auth/me), and sign-in, sign-up and sign-out with the session cookie.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, ApiError, call } from '../../api/client';
import type { components } from '../../api/schema';

export type User = components['schemas']['UserPublic'];

export interface Session {
  status: 'loading' | 'signedIn' | 'signedOut' | 'error';
  user: User | null;
  error: string | null;
  signIn: (username: string, password: string) => Promise<void>;
  signUp: (username: string, password: string) => Promise<void>;
  signOut: () => Promise<void>;
  retry: () => void;
}

const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession needs a SessionProvider');
  return session;
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [status, setStatus] = useState<Session['status']>('loading');
  const [user, setUser] = useState<User | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let cancelled = false;
    call(() => api.GET('/api/auth/me'))
      .then((me) => {
        if (cancelled) return;
        setUser(me);
        setStatus('signedIn');
      })
      .catch((reason: unknown) => {
        if (cancelled) return;
        if (reason instanceof ApiError && reason.status === 401) {
          setStatus('signedOut');
        } else {
          setError(reason instanceof Error ? reason.message : String(reason));
          setStatus('error');
        }
      });
    return () => {
      cancelled = true;
    };
  }, [attempt]);

  const signIn = useCallback(async (username: string, password: string) => {
    const me = await call(() => api.POST('/api/auth/login', { body: { username, password } }));
    setUser(me);
    setStatus('signedIn');
  }, []);

  const signUp = useCallback(async (username: string, password: string) => {
    const me = await call(() => api.POST('/api/auth/signup', { body: { username, password } }));
    setUser(me);
    setStatus('signedIn');
  }, []);

  const signOut = useCallback(async () => {
    await call(() => api.POST('/api/auth/logout'));
    setUser(null);
    // In single-user mode (--no-auth) the server still answers with its one user.
    setAttempt((n) => n + 1);
  }, []);

  const retry = useCallback(() => {
    setStatus('loading');
    setAttempt((n) => n + 1);
  }, []);

  const value = useMemo(
    () => ({ status, user, error, signIn, signUp, signOut, retry }),
    [status, user, error, signIn, signUp, signOut, retry],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
