import { memo, useId, useMemo, useState, type DragEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { CatalogEntry } from '../../../api/types';
import { groupCatalog, type CatalogIndex } from '../../catalog/catalogIndex';
import { CategoryIcon } from '../nodes/CategoryIcon';

/** The drag payload: a catalog type name under our own MIME type. */
export const DRAG_MIME = 'application/x-dragdl-node';

interface Props {
  catalog: CatalogIndex;
  onAdd: (kind: string) => void;
}

function PaletteItem({ entry, onAdd }: { entry: CatalogEntry; onAdd: (kind: string) => void }) {
  const { t } = useTranslation();
  const onDragStart = (event: DragEvent<HTMLButtonElement>) => {
    event.dataTransfer.setData(DRAG_MIME, entry.type);
    event.dataTransfer.setData('text/plain', entry.type);
    event.dataTransfer.effectAllowed = 'copy';
  };
  return (
    <li>
      <button
        type="button"
        className={`palette__item palette__item--${entry.category}`}
        draggable
        onDragStart={onDragStart}
        onClick={() => onAdd(entry.type)}
        title={`${entry.description}\n\n${t('palette.hint')}`}
        aria-label={t('palette.add', { title: entry.title })}
        data-type={entry.type}
      >
        <span className="palette__dot" aria-hidden="true" />
        <span className="palette__title">{entry.title}</span>
        {entry.random && (
          <span className="palette__tag" title={t('palette.randomHelp')}>
            {t('palette.random')}
          </span>
        )}
      </button>
    </li>
  );
}

export const Palette = memo(function Palette({ catalog, onAdd }: Props) {
  const { t } = useTranslation();
  const [query, setQuery] = useState('');
  const searchId = useId();
  const groups = useMemo(() => groupCatalog(catalog.entries, query), [catalog, query]);

  return (
    <aside className="palette" aria-label={t('palette.title')}>
      <div className="palette__search">
        <label htmlFor={searchId} className="visually-hidden">
          {t('palette.search')}
        </label>
        <input
          id={searchId}
          type="search"
          value={query}
          placeholder={t('palette.searchPlaceholder')}
          onChange={(event) => setQuery(event.target.value)}
          autoComplete="off"
        />
      </div>
      <div className="palette__groups">
        {groups.map((group) => (
          <details key={group.category} open className={`palette__group palette__group--${group.category}`}>
            <summary>
              <CategoryIcon category={group.category} size={14} />
              <span>{t(`category.${group.category}`)}</span>
              <span className="palette__count">{group.entries.length}</span>
            </summary>
            <ul>
              {group.entries.map((entry) => (
                <PaletteItem key={entry.type} entry={entry} onAdd={onAdd} />
              ))}
            </ul>
          </details>
        ))}
        {groups.length === 0 && <p className="palette__empty">{t('palette.empty', { query })}</p>}
      </div>
      <p className="palette__hint">{t('palette.hint')}</p>
    </aside>
  );
});
