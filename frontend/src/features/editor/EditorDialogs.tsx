// The editor's dialogs, one at a time: templates, open, versions, train, sweep, code, shortcuts.
import type { SavedGraph } from '../../api/graphs';
import type { DatasetSummary, GraphNodeSpec, GraphSpec, JsonSchema } from '../../api/types';
import { CodeDialog } from './dialogs/CodeDialog';
import { OpenDialog } from './dialogs/OpenDialog';
import { ShortcutsDialog } from './dialogs/ShortcutsDialog';
import { TemplatesDialog } from './dialogs/TemplatesDialog';
import { SweepDialog, type SweepOptions } from './dialogs/SweepDialog';
import { TrainDialog, type TrainStep } from './dialogs/TrainDialog';
import { VersionsDialog } from './dialogs/VersionsDialog';
import { epochsOf, epochsRange } from './logic/train';
import type { ServerLink } from './storage';

export type Dialog = null | 'templates' | 'shortcuts' | 'open' | 'versions' | 'train' | 'sweep' | { code: GraphSpec };

interface Props {
  dialog: Dialog;
  onClose: () => void;
  graph: GraphSpec;
  link: ServerLink | null;
  trainNode: GraphNodeSpec | null;
  trainSchema: JsonSchema | undefined;
  dataset: DatasetSummary | null;
  onTemplate: (graph: GraphSpec) => void;
  onOpenSaved: (saved: SavedGraph) => void;
  onTrain: (options: { name: string; epochs: number | null }, onStep: (step: TrainStep) => void) => Promise<void>;
  objectives: string[];
  onSweep: (options: SweepOptions) => Promise<void>;
}

export function EditorDialogs({
  dialog,
  onClose,
  graph,
  link,
  trainNode,
  trainSchema,
  dataset,
  onTemplate,
  onOpenSaved,
  onTrain,
  objectives,
  onSweep,
}: Props) {
  const openSaved = (saved: SavedGraph) => {
    onClose();
    onOpenSaved(saved);
  };
  if (dialog === null) return null;
  if (typeof dialog === 'object') return <CodeDialog graph={dialog.code} onClose={onClose} />;
  switch (dialog) {
    case 'shortcuts':
      return <ShortcutsDialog onClose={onClose} />;
    case 'templates':
      return (
        <TemplatesDialog
          onClose={onClose}
          onOpen={(template) => {
            onClose();
            onTemplate(template);
          }}
        />
      );
    case 'open':
      return <OpenDialog onClose={onClose} onOpen={openSaved} />;
    case 'versions':
      return <VersionsDialog link={link} name={graph.name} onClose={onClose} onRestored={openSaved} />;
    case 'train':
      return (
        <TrainDialog
          name={graph.name}
          epochs={epochsOf(trainNode, trainSchema)}
          range={epochsRange(trainSchema)}
          nodeCount={graph.nodes.length}
          dataset={dataset}
          onSubmit={onTrain}
          onClose={onClose}
        />
      );
    case 'sweep':
      return <SweepDialog graph={graph} objectives={objectives} onSubmit={onSweep} onClose={onClose} />;
  }
}
