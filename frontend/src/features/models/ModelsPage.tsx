import { useTranslation } from 'react-i18next';
import { Placeholder } from '../../ui/Placeholder';

export default function ModelsPage() {
  const { t } = useTranslation();
  return <Placeholder title={t('app.nav.models')} body={t('placeholder.models')} />;
}
