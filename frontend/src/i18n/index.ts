import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import en from './en';
import zh from './zh';
import { templateTextsZh } from '../features/editor/templateTexts';
import { accountMessages as account } from '../features/account/messages';
import { datasetsMessages as datasets } from '../features/datasets/messages';
import { inputsMessages as inputs } from '../features/inputs/messages';
import { modelsMessages as models } from '../features/models/messages';
import { monitorMessages as monitor } from '../features/monitor/messages';
import { sweepsMessages as sweeps } from '../features/sweeps/messages';
import { tasksMessages as tasks } from '../features/tasks/messages';

export const LANGUAGES = [
  { code: 'en', label: 'EN' },
  { code: 'zh', label: '中文' },
] as const;
export type Language = (typeof LANGUAGES)[number]['code'];

const STORAGE_KEY = 'dragdl.language';

export function storedLanguage(): Language {
  try {
    const value = localStorage.getItem(STORAGE_KEY);
    if (value === 'en' || value === 'zh') return value;
  } catch {
    // storage blocked: fall through to the browser's language
  }
  return typeof navigator !== 'undefined' && navigator.language.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

export function setLanguage(language: Language): void {
  try {
    localStorage.setItem(STORAGE_KEY, language);
  } catch {
    // the choice still applies to this page
  }
  void i18n.changeLanguage(language);
}

i18n.on('languageChanged', (language) => {
  document.documentElement.lang = language === 'zh' ? 'zh-CN' : 'en';
});

void i18n.use(initReactI18next).init({
  // The task, monitor, model, dataset and account pages keep their strings next to them (features/*/messages.ts).
  resources: {
    en: {
      translation: {
        ...en,
        ...tasks.en,
        ...monitor.en,
        ...models.en,
        ...datasets.en,
        ...inputs.en,
        ...account.en,
        ...sweeps.en,
      },
    },
    zh: {
      translation: {
        ...zh,
        templateText: templateTextsZh,
        ...tasks.zh,
        ...monitor.zh,
        ...models.zh,
        ...datasets.zh,
        ...inputs.zh,
        ...account.zh,
        ...sweeps.zh,
      },
    },
  },
  lng: storedLanguage(),
  fallbackLng: 'en',
  interpolation: { escapeValue: false },
  returnNull: false,
});

export default i18n;
