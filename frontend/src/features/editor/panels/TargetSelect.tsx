// A Table node's target: one of the table's columns, chosen from a list (a free-text box silently
// meant the last column when left empty). The empty choice says which column it stands for.
import { useTranslation } from 'react-i18next';
import type { DatasetSummary, JsonValue } from '../../../api/types';
import { targetChoices } from '../logic/tablePrep';

interface Props {
  dataset: DatasetSummary;
  value: JsonValue | undefined;
  onChange: (value: JsonValue | undefined) => void;
  inputId: string;
  describedBy: string;
  invalid: boolean;
}

export function TargetSelect({ dataset, value, onChange, inputId, describedBy, invalid }: Props) {
  const { t } = useTranslation();
  const current = typeof value === 'string' ? value : '';
  const choices = targetChoices(dataset, current);
  const known = new Set([...(dataset.columns ?? []).map((column) => column.name), dataset.target ?? '']);
  // While no target is chosen, validation's target is the one the empty choice stands for.
  const fallback =
    !current && dataset.target ? t('props.targetDefault', { column: dataset.target }) : t('props.targetDefaultLast');
  return (
    <select
      id={inputId}
      aria-describedby={describedBy}
      aria-invalid={invalid}
      value={current}
      data-input="target-select"
      onChange={(event) => onChange(event.target.value || undefined)}
    >
      <option value="">{fallback}</option>
      {choices.map((name) => (
        <option key={name} value={name} translate="no">
          {known.has(name) ? name : t('props.targetUnknown', { column: name })}
        </option>
      ))}
    </select>
  );
}
