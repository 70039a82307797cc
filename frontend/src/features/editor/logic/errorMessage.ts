// A validation problem in the reader's language, from its code and details (GraphError).
import type { TFunction } from 'i18next';
import type { GraphError, JsonSchema } from '../../../api/types';
import type { CatalogIndex } from '../../catalog/catalogIndex';

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
  };
  if (language === 'en') return error.message;
  if (error.code === 'param_invalid' && typeof details.type === 'string') {
    const key = `graphError.param.${details.type}`;
    const base = t(key, { ...values, defaultValue: t('graphError.code.param_invalid', values) });
    return details.got === undefined ? base : base + t('graphError.got', { got: String(details.got) });
  }
  const key = `graphError.code.${error.code}`;
  return t(key, { ...values, defaultValue: t('graphError.code.unknown', values) });
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
