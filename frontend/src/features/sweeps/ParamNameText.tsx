// A searched param as text: its node (an identifier, left untranslated, with the `node.param` id as
// its tooltip) and its title in the reader's language.
import type { ParamName } from './paramNames';

export function ParamNameText({ name }: { name: ParamName }) {
  return (
    <>
      <span translate="no" title={name.key}>
        {name.node}
      </span>
      {` · ${name.title}`}
    </>
  );
}
