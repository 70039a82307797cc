import { useTranslation } from 'react-i18next';
import { useSession } from '../features/auth/SessionProvider';
import { LANGUAGES, setLanguage, type Language } from '../i18n';
import { useNotify } from '../ui/toast';
import { Link } from './router';
import { NAV_PAGES, pathFor, type PageName } from './routes';
import { errorText } from '../i18n/errorText';

export function TopBar({ current }: { current: PageName | null }) {
  const { t, i18n } = useTranslation();
  const language = (i18n.resolvedLanguage ?? 'en') as Language;
  const session = useSession();
  const notify = useNotify();
  const signOut = () =>
    session.signOut().catch((error: unknown) => notify({ kind: 'error', message: errorText(error, t) }));
  return (
    <header className="topbar">
      <Link href="/editor" className="topbar__brand" aria-label={`${t('app.name')}: ${t('app.tagline')}`}>
        <img src="/favicon.svg" alt="" width={24} height={24} />
        <span className="topbar__name">{t('app.name')}</span>
        <span className="topbar__tagline">{t('app.tagline')}</span>
      </Link>
      <nav className="topbar__nav" aria-label={t('app.mainNav')}>
        {NAV_PAGES.map((page) => (
          <Link
            key={page}
            href={pathFor(page)}
            className={`topbar__link${current === page ? ' is-active' : ''}`}
            aria-current={current === page ? 'page' : undefined}
          >
            {t(`app.nav.${page}`)}
          </Link>
        ))}
      </nav>
      {session.user && (
        <div className="topbar__user">
          <Link
            href={pathFor('account')}
            className={`topbar__username${current === 'account' ? ' is-active' : ''}`}
            title={t('account.title')}
            aria-current={current === 'account' ? 'page' : undefined}
            translate="no"
          >
            {session.user.username}
          </Link>
          {!session.singleUser && (
            <button type="button" className="topbar__signout" onClick={() => void signOut()}>
              {t('auth.signOut')}
            </button>
          )}
        </div>
      )}
      <div className="topbar__lang" role="group" aria-label={t('app.language')}>
        {LANGUAGES.map(({ code, label }) => (
          <button
            key={code}
            type="button"
            className={`seg${language === code ? ' is-active' : ''}`}
            aria-pressed={language === code}
            lang={code === 'zh' ? 'zh-CN' : 'en'}
            onClick={() => setLanguage(code)}
          >
            {label}
          </button>
        ))}
      </div>
    </header>
  );
}
