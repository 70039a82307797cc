import { useTranslation } from 'react-i18next';
import { Placeholder } from '../../ui/Placeholder';

export default function TasksPage() {
  const { t } = useTranslation();
  return <Placeholder title={t('app.nav.tasks')} body={t('placeholder.tasks')} />;
}
