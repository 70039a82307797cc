import { useTranslation } from 'react-i18next';
import { Placeholder } from '../../ui/Placeholder';

export default function DatasetsPage() {
  const { t } = useTranslation();
  return <Placeholder title={t('app.nav.datasets')} body={t('placeholder.datasets')} />;
}
