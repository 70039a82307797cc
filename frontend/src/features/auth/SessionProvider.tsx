// Who is signed in (GET /api/auth/session), and sign-in, sign-up and sign-out with the session cookie.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { fetchSession, logIn, logOut, signUpUser, type User } from './api';
import { useTranslation } from 'react-i18next';
import { errorText } from '../../i18n/errorText';

export type { User };

export interface Session {
  status: 'loading' | 'signedIn' | 'signedOut' | 'error';
  user: User | null;
  /** The server runs with --no-auth: its one user never signs in or out. */
  singleUser: boolean;
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
  const [singleUser, setSingleUser] = useState(false);
  const { t } = useTranslation();
  // The reason itself, worded when shown: in the language of the moment.
  const [failure, setFailure] = useState<unknown>(null);
  const error = failure === null ? null : errorText(failure, t);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let cancelled = false;
    fetchSession()
      .then((session) => {
        if (cancelled) return;
        setUser(session.user ?? null);
        setSingleUser(session.single_user);
        setStatus(session.signed_in ? 'signedIn' : 'signedOut');
      })
      .catch((reason: unknown) => {
        if (cancelled) return;
        setFailure(reason);
        setStatus('error');
      });
    return () => {
      cancelled = true;
    };
  }, [attempt]);

  const signIn = useCallback(async (username: string, password: string) => {
    const me = await logIn(username, password);
    setUser(me);
    setStatus('signedIn');
  }, []);

  const signUp = useCallback(async (username: string, password: string) => {
    const me = await signUpUser(username, password);
    setUser(me);
    setStatus('signedIn');
  }, []);

  const signOut = useCallback(async () => {
    await logOut();
    setUser(null);
    // In single-user mode (--no-auth) the server still answers with its one user.
    setAttempt((n) => n + 1);
  }, []);

  const retry = useCallback(() => {
    setStatus('loading');
    setAttempt((n) => n + 1);
  }, []);

  const value = useMemo(
    () => ({ status, user, singleUser, error, signIn, signUp, signOut, retry }),
    [status, user, singleUser, error, signIn, signUp, signOut, retry],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
