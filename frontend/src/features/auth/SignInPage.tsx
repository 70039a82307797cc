import { useId, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useSession } from './SessionProvider';
import { errorText } from '../../i18n/errorText';

export default function SignInPage() {
  const { t } = useTranslation();
  const { signIn, signUp } = useSession();
  const [mode, setMode] = useState<'signIn' | 'signUp'>('signIn');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = useId();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await (mode === 'signIn' ? signIn : signUp)(username.trim(), password);
    } catch (reason) {
      // A 401 here is a wrong password, not a lost session.
      setError(errorText(reason, t, mode === 'signIn' ? 'signIn' : 'request'));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="signin" aria-labelledby={`${id}-title`}>
      <form className="signin__card" onSubmit={(event) => void submit(event)}>
        <h1 id={`${id}-title`}>{mode === 'signIn' ? t('auth.signInTitle') : t('auth.signUpTitle')}</h1>
        <div className="field">
          <label htmlFor={`${id}-user`}>{t('auth.username')}</label>
          <input
            id={`${id}-user`}
            type="text"
            autoComplete="username"
            required
            maxLength={64}
            value={username}
            onChange={(event) => setUsername(event.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor={`${id}-password`}>{t('auth.password')}</label>
          <input
            id={`${id}-password`}
            type="password"
            autoComplete={mode === 'signIn' ? 'current-password' : 'new-password'}
            required
            minLength={mode === 'signUp' ? 8 : undefined}
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            aria-describedby={mode === 'signUp' ? `${id}-hint` : undefined}
          />
          {mode === 'signUp' && (
            <p id={`${id}-hint`} className="field__help">
              {t('auth.passwordHint')}
            </p>
          )}
        </div>
        {error && (
          <p className="dialog-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="btn btn--primary signin__submit" disabled={busy}>
          {mode === 'signIn' ? t('auth.signIn') : t('auth.signUp')}
        </button>
        <button
          type="button"
          className="signin__switch"
          onClick={() => {
            setMode(mode === 'signIn' ? 'signUp' : 'signIn');
            setError(null);
          }}
        >
          {mode === 'signIn' ? t('auth.toSignUp') : t('auth.toSignIn')}
        </button>
      </form>
    </section>
  );
}
