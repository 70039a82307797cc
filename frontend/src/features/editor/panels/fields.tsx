// One control per kind of schema field (logic/schemaForm.ts decides the kind).
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { JsonValue } from '../../../api/types';
import {
  describeRange,
  formatFieldValue,
  optionLabel,
  parseFieldText,
  type FieldSpec,
  type ParseError,
} from '../logic/schemaForm';

export interface FieldProps {
  field: FieldSpec;
  /** The stored param (undefined when unset: the default applies). */
  value: JsonValue | undefined;
  onChange: (value: JsonValue | undefined) => void;
  inputId: string;
  describedBy: string;
  invalid: boolean;
  /** For a control that has no <label> of its own (the number box of a choice-or-number). */
  ariaLabel?: string;
}

const NUMBER_KINDS = new Set(['integer', 'number']);

/** Text-like controls keep what is typed until it parses, and show why it does not. */
function TextControl({ field, value, onChange, inputId, describedBy, invalid, ariaLabel }: FieldProps) {
  const { t } = useTranslation();
  const formatted = formatFieldValue(field, value);
  const [text, setText] = useState(formatted);
  const [error, setError] = useState<ParseError | null>(null);
  const shown = useRef(formatted);

  useEffect(() => {
    // Changed from outside (undo, another node): show the new value.
    if (formatted !== shown.current) {
      shown.current = formatted;
      setText(formatted);
      setError(null);
    }
  }, [formatted]);

  const update = (raw: string) => {
    setText(raw);
    const parsed = parseFieldText(field, raw);
    if (!parsed.ok) {
      setError(parsed.error);
      return;
    }
    setError(null);
    shown.current = formatFieldValue(field, parsed.value);
    onChange(parsed.value);
  };

  const placeholder =
    field.default !== undefined && field.default !== null
      ? t('props.default', { value: formatFieldValue(field, field.default) })
      : field.nullable
        ? t('props.empty')
        : '';
  const common = {
    id: inputId,
    value: text,
    'aria-label': ariaLabel,
    placeholder,
    'aria-describedby': describedBy,
    'aria-invalid': invalid || error !== null,
    'aria-required': field.required,
  };
  const message = error && (
    <span className="field__local-error" role="alert">
      {t(`props.${error}`)}
    </span>
  );

  if (NUMBER_KINDS.has(field.kind)) {
    return (
      <>
        <input
          {...common}
          type="number"
          inputMode={field.kind === 'integer' ? 'numeric' : 'decimal'}
          min={field.minimum ?? field.exclusiveMinimum}
          max={field.maximum ?? field.exclusiveMaximum}
          step={field.kind === 'integer' ? 1 : 'any'}
          onChange={(event) => update(event.target.value)}
        />
        {message}
      </>
    );
  }
  if (field.kind === 'text' || field.kind === 'json') {
    return (
      <>
        <textarea
          {...common}
          rows={3}
          spellCheck={false}
          maxLength={field.maxLength}
          onChange={(event) => update(event.target.value)}
        />
        {message}
      </>
    );
  }
  return (
    <>
      <input
        {...common}
        type="text"
        spellCheck={false}
        maxLength={field.kind === 'string' ? field.maxLength : undefined}
        onChange={(event) => update(event.target.value)}
      />
      {message}
    </>
  );
}

function SelectControl({ field, value, onChange, inputId, describedBy, invalid }: FieldProps) {
  const { t } = useTranslation();
  const options = field.options ?? [];
  const current = value === undefined ? field.default : value;
  const index = options.findIndex((option) => option === current);
  return (
    <select
      id={inputId}
      aria-describedby={describedBy}
      aria-invalid={invalid}
      value={current === null || index === -1 ? '' : String(index)}
      onChange={(event) => onChange(event.target.value === '' ? null : options[Number(event.target.value)])}
    >
      {(field.nullable || index === -1) && <option value="">{t('props.none_option')}</option>}
      {options.map((option, i) => (
        <option key={String(option)} value={String(i)}>
          {optionLabel(field, option)}
        </option>
      ))}
    </select>
  );
}

const CUSTOM = '__number__';

/** "same" | "valid" | a number: a select of the named choices plus "Number…", then a number box. */
function ChoiceOrNumberControl(props: FieldProps) {
  const { field, value, onChange, inputId, describedBy, invalid } = props;
  const { t } = useTranslation();
  const options = field.options ?? [];
  const current = value === undefined ? field.default : value;
  const isNumber = typeof current === 'number';
  const index = options.findIndex((option) => option === current);
  return (
    <div className="field__combo">
      <select
        id={inputId}
        aria-describedby={describedBy}
        aria-invalid={invalid}
        value={isNumber ? CUSTOM : index === -1 ? '' : String(index)}
        onChange={(event) => {
          const choice = event.target.value;
          if (choice === CUSTOM) onChange(field.minimum ?? 1);
          else onChange(choice === '' ? null : options[Number(choice)]);
        }}
      >
        {(field.nullable || (!isNumber && index === -1)) && <option value="">{t('props.none_option')}</option>}
        {options.map((option, i) => (
          <option key={String(option)} value={String(i)}>
            {optionLabel(field, option)}
          </option>
        ))}
        <option value={CUSTOM}>{t('props.custom')}</option>
      </select>
      {isNumber && (
        <TextControl
          {...props}
          field={{ ...field, kind: field.integer ? 'integer' : 'number' }}
          value={current}
          inputId={`${inputId}-number`}
          ariaLabel={field.title}
        />
      )}
    </div>
  );
}

function SwitchControl({ field, value, onChange, inputId, describedBy }: FieldProps) {
  const { t } = useTranslation();
  // A locked switch shows what really happens, whatever the stored param says.
  const on = (field.locked ? field.locked.value : value === undefined ? field.default : value) === true;
  return (
    <button
      id={inputId}
      type="button"
      role="switch"
      aria-checked={on}
      aria-describedby={describedBy}
      className={`switch${on ? ' is-on' : ''}`}
      disabled={field.locked !== undefined}
      onClick={() => onChange(!on)}
    >
      <span className="switch__track" aria-hidden="true">
        <span className="switch__thumb" />
      </span>
      <span className="switch__text">{on ? t('props.on') : t('props.off')}</span>
    </button>
  );
}

export function FieldControl(props: FieldProps) {
  switch (props.field.kind) {
    case 'boolean':
      return <SwitchControl {...props} />;
    case 'enum':
      return <SelectControl {...props} />;
    case 'choiceOrNumber':
      return <ChoiceOrNumberControl {...props} />;
    default:
      return <TextControl {...props} />;
  }
}

export function fieldHelp(field: FieldSpec, listHelp: string): string {
  const parts = [field.locked?.reason ?? '', field.description];
  const range = describeRange(field);
  if (range) parts.push(`(${range})`);
  if (field.kind === 'numberList' || field.kind === 'stringList') parts.push(`${listHelp}.`);
  return parts.filter(Boolean).join(' ');
}
