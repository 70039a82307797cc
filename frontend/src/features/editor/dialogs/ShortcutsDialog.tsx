import { useTranslation } from 'react-i18next';
import { Modal } from '../../../ui/Modal';

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);
const mod = isMac ? '⌘' : 'Ctrl';

export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const rows: [string[], string][] = [
    [[mod, 'Z'], t('shortcuts.undo')],
    [[mod, 'Shift', 'Z'], t('shortcuts.redo')],
    [[mod, 'Y'], t('shortcuts.redo')],
    [[mod, 'C'], t('shortcuts.copy')],
    [[mod, 'V'], t('shortcuts.paste')],
    [[mod, 'A'], t('shortcuts.selectAll')],
    [[mod, 'S'], t('shortcuts.save')],
    [[mod, 'Enter'], t('shortcuts.train')],
    [['Delete'], t('shortcuts.delete')],
    [[t('shortcuts.shiftDrag')], t('shortcuts.multi')],
    [[mod, 'Click'], t('shortcuts.multiClick')],
    [['L'], t('shortcuts.layout')],
    [['F'], t('shortcuts.fit')],
    [['?'], t('shortcuts.help')],
  ];
  return (
    <Modal title={t('shortcuts.title')} onClose={onClose}>
      <table className="shortcuts">
        <tbody>
          {rows.map(([keys, what]) => (
            <tr key={keys.join('+')}>
              <td>
                {keys.map((key, i) => (
                  <span key={key}>
                    {i > 0 && ' + '}
                    <kbd>{key}</kbd>
                  </span>
                ))}
              </td>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Modal>
  );
}
