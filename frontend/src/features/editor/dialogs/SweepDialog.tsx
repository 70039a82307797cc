// "Sweep": the last look before a hyper-parameter search of the open graph: its name, the budget
// (trials), how many train at once, the objective, the sampler and the early stopping of poor
// trials. The searched params themselves are marked in the property form (SearchControl).
import { Fragment, useId, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { GraphSpec } from '../../../api/types';
import { errorText } from '../../../i18n/errorText';
import { Modal } from '../../../ui/Modal';
import { useCatalog } from '../../catalog/CatalogProvider';
import type { PrunerName, SamplerName, SweepCreate } from '../../sweeps/api';
import { objectiveLabel } from '../../sweeps/objective';
import { ParamNameText } from '../../sweeps/ParamNameText';
import { searchedParams } from '../../sweeps/paramNames';

export type SweepOptions = Omit<SweepCreate, 'graph_id'>;

interface Props {
  graph: GraphSpec;
  /** The validation metrics the graph's task kind offers, the default first. */
  objectives: string[];
  /** Save and start; resolves once the sweep exists (the page then changes), rejects with a message. */
  onSubmit: (options: SweepOptions) => Promise<void>;
  onClose: () => void;
}

const SAMPLERS: SamplerName[] = ['tpe', 'random', 'grid'];
const PRUNERS: PrunerName[] = ['median', 'halving', 'none'];
const TRIALS = { min: 1, max: 1000 };
const PARALLEL = { min: 1, max: 64 };

const whole = (text: string, range: { min: number; max: number }) =>
  /^\d+$/.test(text.trim()) && Number(text) >= range.min && Number(text) <= range.max;

export function SweepDialog({ graph, objectives, onSubmit, onClose }: Props) {
  const { t } = useTranslation();
  const baseId = useId();
  const [name, setName] = useState(graph.name);
  const [trials, setTrials] = useState('16');
  const [parallel, setParallel] = useState('2');
  const [objective, setObjective] = useState(objectives[0] ?? '');
  const [sampler, setSampler] = useState<SamplerName>('tpe');
  const [pruner, setPruner] = useState<PrunerName>('median');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const catalog = useCatalog();
  const searched = searchedParams(graph.search, graph.nodes, catalog.index);
  const ok = searched.length > 0 && whole(trials, TRIALS) && whole(parallel, PARALLEL);

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    if (busy || !ok) return;
    setBusy(true);
    setError(null);
    onSubmit({
      name: name.trim() || graph.name,
      trials: Number(trials),
      parallel: Number(parallel),
      objective: objective || null,
      sampler,
      pruner,
      seed: 0,
    }).catch((reason: unknown) => {
      setBusy(false);
      setError(errorText(reason, t));
    });
  };

  const formId = `${baseId}-form`;
  const number = (
    id: string,
    label: string,
    help: string,
    value: string,
    set: (v: string) => void,
    range: typeof TRIALS,
  ) => {
    const valid = whole(value, range);
    return (
      <div className={`field${valid ? '' : ' has-error'}`}>
        <label htmlFor={`${baseId}-${id}`}>{label}</label>
        <input
          id={`${baseId}-${id}`}
          type="number"
          inputMode="numeric"
          min={range.min}
          max={range.max}
          step={1}
          value={value}
          disabled={busy}
          aria-invalid={!valid}
          aria-describedby={`${baseId}-${id}-help`}
          data-field={id}
          onChange={(event) => set(event.target.value)}
        />
        <p id={`${baseId}-${id}-help`} className="field__help">
          {valid ? help : t('sweeps.dialog.range', range)}
        </p>
      </div>
    );
  };

  return (
    <Modal
      title={t('sweeps.dialog.title')}
      onClose={() => !busy && onClose()}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose} disabled={busy}>
            {t('common.cancel')}
          </button>
          <button
            type="submit"
            form={formId}
            className="btn btn--primary"
            disabled={busy || !ok}
            data-action="start-sweep"
          >
            {busy ? t('sweeps.dialog.starting') : t('sweeps.dialog.start')}
          </button>
        </>
      }
    >
      <form id={formId} className="train-form sweep-form" onSubmit={submit} aria-busy={busy}>
        <p className="train-form__summary">
          {searched.length ? (
            <>
              {t('sweeps.dialog.searched', { count: searched.length })}
              {searched.map((param, index) => (
                <Fragment key={param.key}>
                  {index > 0 && t('sweeps.dialog.listSeparator')}
                  <span className="sweep-form__param" data-param={param.key}>
                    <ParamNameText name={param} />
                  </span>
                </Fragment>
              ))}
            </>
          ) : (
            t('sweeps.dialog.noSearch')
          )}
        </p>
        <div className="field">
          <label htmlFor={`${baseId}-name`}>{t('sweeps.dialog.name')}</label>
          <input
            id={`${baseId}-name`}
            type="text"
            value={name}
            maxLength={180}
            disabled={busy}
            onChange={(event) => setName(event.target.value)}
          />
        </div>
        <div className="sweep-form__row">
          {number('trials', t('sweeps.dialog.trials'), t('sweeps.dialog.trialsHelp'), trials, setTrials, TRIALS)}
          {number(
            'parallel',
            t('sweeps.dialog.parallel'),
            t('sweeps.dialog.parallelHelp'),
            parallel,
            setParallel,
            PARALLEL,
          )}
        </div>
        <div className="field">
          <label htmlFor={`${baseId}-objective`}>{t('sweeps.dialog.objective')}</label>
          <select
            id={`${baseId}-objective`}
            value={objective}
            disabled={busy}
            data-field="objective"
            onChange={(event) => setObjective(event.target.value)}
          >
            {objectives.map((name) => (
              <option key={name} value={name}>
                {objectiveLabel(name, catalog.index, t)}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${baseId}-sampler`}>{t('sweeps.dialog.sampler')}</label>
          <select
            id={`${baseId}-sampler`}
            value={sampler}
            disabled={busy}
            data-field="sampler"
            onChange={(event) => setSampler(event.target.value as SamplerName)}
          >
            {SAMPLERS.map((value) => (
              <option key={value} value={value}>
                {t(`sweeps.sampler.${value}`)}
              </option>
            ))}
          </select>
          <p className="field__help">{t('sweeps.dialog.samplerHelp')}</p>
        </div>
        <div className="field">
          <label htmlFor={`${baseId}-pruner`}>{t('sweeps.dialog.pruner')}</label>
          <select
            id={`${baseId}-pruner`}
            value={pruner}
            disabled={busy}
            data-field="pruner"
            onChange={(event) => setPruner(event.target.value as PrunerName)}
          >
            {PRUNERS.map((value) => (
              <option key={value} value={value}>
                {t(`sweeps.pruner.${value}`)}
              </option>
            ))}
          </select>
          <p className="field__help">{t('sweeps.dialog.prunerHelp')}</p>
        </div>
        {error && (
          <p className="train-form__error" role="alert">
            {t('sweeps.dialog.failed', { message: error })}
          </p>
        )}
      </form>
    </Modal>
  );
}
