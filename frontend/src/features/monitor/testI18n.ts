// The monitor's messages in both languages, for its unit tests.
import i18next, { type TFunction } from 'i18next';
import { monitorMessages } from './messages';

const i18n = i18next.createInstance();
await i18n.init({
  resources: { en: { translation: monitorMessages.en }, zh: { translation: monitorMessages.zh } },
  lng: 'en',
  interpolation: { escapeValue: false },
});

/** English. */
export const t = i18n.t.bind(i18n) as TFunction;
/** Chinese. */
export const zh = i18n.getFixedT('zh') as TFunction;
