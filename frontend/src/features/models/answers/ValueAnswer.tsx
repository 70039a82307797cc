import { useTranslation } from 'react-i18next';
import type { AnswerSummaryProps } from './types';

/** A regression model answers a number: of its target column, for a table. */
export function ValueAnswer({ model }: AnswerSummaryProps) {
  const { t } = useTranslation();
  return (
    <span className="muted" data-target={model.target ?? ''}>
      {t('models.predictsValue', { target: model.target ?? t('models.value') })}
    </span>
  );
}
