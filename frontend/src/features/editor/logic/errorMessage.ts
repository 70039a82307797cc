// A validation problem in the reader's language, from its code and details (GraphError).
import type { TFunction } from 'i18next';
import type { GraphError, JsonSchema } from '../../../api/types';
import type { CatalogIndex } from '../../catalog/catalogIndex';
import { messageDetails, missingValues } from './errorDetails';

/** Names the message may use: the node's display title and the field's title, both already translated. */
export interface ErrorNames {
  node: string | null;
  field: string | null;
}

/** The title of `field` (a dotted path: its first part) on a node of type `kind`, in the catalog's language. */
export function fieldTitle(catalog: CatalogIndex, kind: string | undefined, field: string | null): string | null {
  if (!field) return null;
  const [name, ...rest] = field.split('.');
  const schema: JsonSchema | undefined = kind ? catalog.byType.get(kind)?.params_schema.properties?.[name!] : undefined;
  const title = schema?.title ?? name!;
  return rest.length ? `${title} [${rest.join(', ')}]` : title;
}

/**
 * English shows the server's own message (it names files, shapes and values); other languages
 * render the code's template with the node and field titles, and the details the server sent.
 */
export function errorText(error: GraphError, t: TFunction, names: ErrorNames, language: string): string {
  const details = error.details ?? {};
  const values = {
    node: names.node ?? t('graphError.thisNode'),
    field: names.field ?? (typeof details.title === 'string' ? details.title : (error.field ?? '')),
    limit: details.limit === undefined ? '' : String(details.limit),
    classes: details.classes === undefined ? '' : String(details.classes),
    shape: typeof details.shape === 'string' ? details.shape.replace(/x/g, '×') : '',
    requested: details.requested === undefined ? '' : String(details.requested),
    largest: details.largest === undefined || details.largest === null ? '' : String(details.largest),
    cap: details.cap === undefined ? '' : String(details.cap),
    least: details.least === undefined ? '' : String(details.least),
  };
  if (language === 'en') return error.message;
  const text = translated(error, t, values);
  // Nothing the English names may be dropped: values no template placed are shown after it.
  const left = missingValues(error.message, text);
  return left.length ? text + t('graphError.shown', { values: left.join('，') }) : text;
}

function translated(error: GraphError, t: TFunction, values: Record<string, string>): string {
  const details = error.details ?? {};
  if (error.code === 'param_invalid' && typeof details.type === 'string') {
    const key = `graphError.param.${details.type}`;
    const base = t(key, { ...values, defaultValue: t('graphError.code.param_invalid', values) });
    return details.got === undefined ? base : base + t('graphError.got', { got: String(details.got) });
  }
  const plain = t(`graphError.code.${error.code}`, { ...values, defaultValue: t('graphError.code.unknown', values) });
  const named = { ...values, ...detailValues(error, t) };
  const read = messageDetails(error.code, error.message);
  if (read === null && !('column' in named) && !('produced' in named) && !('fix' in named)) return plain;
  const extra = { ...named, ...read };
  const hint = extra.close ? t('graphError.didYouMean', { close: extra.close }) : '';
  return t(`graphError.detailed.${error.code}`, { ...extra, hint, defaultValue: plain });
}

/** Values the server sent as details, worded for the templates (port types and column kinds translated). */
function detailValues(error: GraphError, t: TFunction): Record<string, string> {
  const details = error.details ?? {};
  const found: Record<string, string> = {};
  if (typeof details.column === 'string') found.column = `'${details.column}'`;
  if (typeof details.count === 'number') found.count = String(details.count);
  if (typeof details.kind === 'string')
    found.kind = t(`graphError.columnKind.${details.kind}`, { defaultValue: details.kind });
  const portName = (type: unknown) => t(`node.portType.${String(type)}`, { defaultValue: String(type) });
  if (typeof details.produced === 'string') found.produced = portName(details.produced);
  // A layer that needs one vector per sample says what would make one (flatten, pool over time).
  if (typeof details.suggest === 'string') {
    found.fix = t(`graphError.suggest.${details.suggest}`, { defaultValue: details.suggest });
    if (typeof details.input_shape === 'string') found.inputShape = details.input_shape.replace(/x/g, '×');
  }
  if (Array.isArray(details.accepted)) found.accepted = details.accepted.map(portName).join(t('connection.or'));
  return found;
}

/**
 * The node name a problem line leads with, or null when its message already names the node (the
 * server's English says "linear-1 (Linear (Dense)) has no input connected", the templates use
 * {{node}}): a line names its node once.
 */
export function problemWhere(message: string, title: string | null, nodeId: string | null): string | null {
  if (!title) return null;
  const named = message.includes(title) || (nodeId !== null && nodeId !== '' && message.includes(nodeId));
  return named ? null : title;
}
