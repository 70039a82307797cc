// "Search in a sweep" under a numeric or choice field of the property form: a range (low, high, log
// scale) for numbers, the choices to try for enums (and, for whole numbers, a list such as batch
// sizes). It edits the node's part of the graph's search section through the editor (undoable).
import { useEffect, useId, useRef, useState } from 'react';
import './search.css';
import { useTranslation } from 'react-i18next';
import type { JsonValue } from '../../../api/types';
import { optionLabel, type FieldSpec } from '../logic/schemaForm';
import {
  defaultSpec,
  isScalar,
  isWholeField,
  parseChoices,
  searchKind,
  specProblem,
  type SearchScalar,
  type SearchSpec,
} from '../logic/search';

interface Props {
  field: FieldSpec;
  value: JsonValue | undefined;
  spec: SearchSpec | undefined;
  onChange: (spec: SearchSpec | undefined) => void;
}

/** A text box that keeps what is typed until it parses (a half-typed "1e-" is not a number yet). */
function DraftInput({
  value,
  parse,
  onValue,
  label,
  wide = false,
}: {
  value: string;
  parse: (text: string) => boolean;
  onValue: (text: string) => void;
  label: string;
  wide?: boolean;
}) {
  const [text, setText] = useState(value);
  const shown = useRef(value);
  useEffect(() => {
    if (value !== shown.current) {
      shown.current = value;
      setText(value);
    }
  }, [value]);
  const ok = parse(text);
  return (
    <input
      type="text"
      inputMode={wide ? 'text' : 'decimal'}
      className={`search__input${wide ? ' search__input--wide' : ''}`}
      aria-label={label}
      aria-invalid={!ok}
      spellCheck={false}
      value={text}
      onChange={(event) => {
        const next = event.target.value;
        setText(next);
        if (parse(next)) {
          shown.current = next;
          onValue(next);
        }
      }}
    />
  );
}

const isNumber = (text: string) => text.trim() !== '' && Number.isFinite(Number(text));
const isWhole = (text: string) => isNumber(text) && Number.isInteger(Number(text));

export function SearchControl({ field, value, spec, onChange }: Props) {
  const { t } = useTranslation();
  const baseId = useId();
  const kind = searchKind(field);
  if (kind === null) return null;
  const on = spec !== undefined;
  const problem = spec ? specProblem(spec) : null;
  const toggle = () => onChange(on ? undefined : (defaultSpec(field, value) ?? undefined));

  let body = null;
  if (spec && spec.type !== 'choice') {
    const whole = spec.type === 'int';
    const check = whole ? isWhole : isNumber;
    body = (
      <div className="search__range">
        <DraftInput
          value={String(spec.low)}
          parse={check}
          label={t('sweeps.search.low', { field: field.title })}
          onValue={(text) => onChange({ ...spec, low: Number(text) })}
        />
        <span aria-hidden="true">–</span>
        <DraftInput
          value={String(spec.high)}
          parse={check}
          label={t('sweeps.search.high', { field: field.title })}
          onValue={(text) => onChange({ ...spec, high: Number(text) })}
        />
        <label className="search__log">
          <input
            type="checkbox"
            checked={spec.log ?? false}
            onChange={(event) =>
              onChange(
                spec.type === 'int'
                  ? { ...spec, log: event.target.checked, step: 1 }
                  : { ...spec, log: event.target.checked },
              )
            }
          />
          {t('sweeps.search.log')}
        </label>
      </div>
    );
  } else if (spec && isWholeField(field)) {
    body = (
      <div className="search__range">
        <DraftInput
          wide
          value={spec.values.join(', ')}
          parse={(text) => parseChoices(text, true)?.every(Number.isInteger) ?? false}
          label={t('sweeps.search.values', { field: field.title })}
          onValue={(text) => onChange({ type: 'choice', values: parseChoices(text, true) ?? [] })}
        />
      </div>
    );
  } else if (spec) {
    const options: JsonValue[] = field.kind === 'boolean' ? [true, false] : (field.options ?? []);
    body = (
      <fieldset className="search__choices">
        <legend className="visually-hidden">{t('sweeps.search.choices', { field: field.title })}</legend>
        {options.map((option) => {
          const checked = isScalar(option) && spec.values.includes(option);
          return (
            <label key={String(option)} className="search__choice">
              <input
                type="checkbox"
                checked={checked}
                onChange={() => {
                  // The catalog's order, whatever order they were ticked in.
                  const values = options.filter(
                    (o): o is SearchScalar => isScalar(o) && (o === option ? !checked : spec.values.includes(o)),
                  );
                  onChange({ type: 'choice', values });
                }}
              />
              {field.kind === 'boolean' ? t(option ? 'props.on' : 'props.off') : optionLabel(field, option)}
            </label>
          );
        })}
      </fieldset>
    );
  }

  // Whole numbers may be searched as a range or as a list (batch sizes: 32, 64, 128).
  const modeSwitch = spec && isWholeField(field) && (
    <select
      className="search__mode"
      aria-label={t('sweeps.search.mode', { field: field.title })}
      value={spec.type === 'choice' ? 'choice' : 'range'}
      onChange={(event) => {
        if (event.target.value === 'choice') {
          const start = spec.type === 'int' ? spec.low : 1;
          onChange({ type: 'choice', values: [start, start * 2, start * 4] });
        } else onChange(defaultSpec(field, value) ?? undefined);
      }}
    >
      <option value="range">{t('sweeps.search.modeRange')}</option>
      <option value="choice">{t('sweeps.search.modeList')}</option>
    </select>
  );

  return (
    <div className={`search${on ? ' is-on' : ''}`} data-search={field.name}>
      <div className="search__head">
        <button
          type="button"
          id={`${baseId}-toggle`}
          className="search__toggle"
          aria-pressed={on}
          data-action="search-param"
          onClick={toggle}
        >
          <span className="search__mark" aria-hidden="true" />
          {on ? t('sweeps.search.on') : t('sweeps.search.off')}
        </button>
        {modeSwitch}
      </div>
      {body}
      {problem && (
        <p className="field__error" role="alert">
          {t(`sweeps.search.problem.${problem}`)}
        </p>
      )}
    </div>
  );
}
