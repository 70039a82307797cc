import { useConnection } from '@xyflow/react';
import { useTranslation } from 'react-i18next';
import type { CatalogIndex } from '../catalog/catalogIndex';
import { checkConnection, type ConnectionLike, type ConnectionVerdict } from './logic/connection';
import type { EditorEdge, EditorNode } from './logic/types';

type Handle = { nodeId: string; id?: string | null; type: 'source' | 'target' };

/** The connection a drag between two handles would make, whichever end it started from. */
export function connectionBetween(from: Handle, to: Handle): ConnectionLike {
  const [source, target] = from.type === 'source' ? [from, to] : [to, from];
  return {
    source: source.nodeId,
    sourceHandle: source.id ?? null,
    target: target.nodeId,
    targetHandle: target.id ?? null,
  };
}

export function useRefusalText() {
  const { t } = useTranslation();
  return (verdict: ConnectionVerdict): string | null => {
    if (verdict.ok) return null;
    const values = { ...verdict.values };
    // Port types are words of the reader's language ("表格", not "table"), as on the node cards.
    const portName = (type: string) => t(`node.portType.${type}`, { defaultValue: type });
    if (values.produced) values.produced = portName(values.produced);
    if (values.accepted) values.accepted = values.accepted.split('|').map(portName).join(t('connection.or'));
    return t(`connection.${verdict.reason}`, values);
  };
}

/** While a connection is dragged over a port that refuses it, say why next to the pointer. */
export function ConnectionHint({
  nodes,
  edges,
  catalog,
}: {
  nodes: EditorNode[];
  edges: EditorEdge[];
  catalog: CatalogIndex;
}) {
  const connection = useConnection();
  const refusal = useRefusalText();
  if (!connection.inProgress || connection.isValid !== false || !connection.toHandle) return null;
  const verdict = checkConnection(connectionBetween(connection.fromHandle, connection.toHandle), nodes, edges, catalog);
  const text = refusal(verdict);
  if (!text) return null;
  return (
    <div
      className="connection-hint"
      role="tooltip"
      style={{ left: connection.pointer.x + 16, top: connection.pointer.y + 16 }}
    >
      {text}
    </div>
  );
}
