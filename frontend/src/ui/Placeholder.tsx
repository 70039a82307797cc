import { useTranslation } from 'react-i18next';

export function Placeholder({ title, body }: { title: string; body: string }) {
  const { t } = useTranslation();
  return (
    <section className="placeholder-page" aria-labelledby="placeholder-title">
      <h1 id="placeholder-title">{title}</h1>
      <p>{body}</p>
      <span className="pill">{t('placeholder.soon')}</span>
    </section>
  );
}
