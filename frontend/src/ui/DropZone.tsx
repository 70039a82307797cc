import { useRef, useState, type DragEvent, type ReactNode } from 'react';
import './dropzone.css';

interface Props {
  /** "Drop … here, or": the text above the button. */
  hint: ReactNode;
  /** The button that opens the file chooser (the keyboard's way in). */
  buttonLabel: string;
  accept: string;
  multiple?: boolean;
  disabled?: boolean;
  /** data-input of the file input, for tests and automation. */
  inputName: string;
  onFiles: (files: File[]) => void;
}

/** A dashed area files can be dropped on (highlighted while they hover), with a button for the
 * file chooser. The input is cleared after each choice, so choosing the same file again counts. */
export function DropZone({ hint, buttonLabel, accept, multiple = false, disabled = false, inputName, onFiles }: Props) {
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const drop = (event: DragEvent) => {
    event.preventDefault();
    setOver(false);
    if (!disabled) onFiles(Array.from(event.dataTransfer.files));
  };
  return (
    <div
      className={`dropzone${over ? ' is-over' : ''}${disabled ? ' is-disabled' : ''}`}
      data-dropzone={inputName}
      onDragOver={(event) => {
        event.preventDefault();
        if (!disabled) setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={drop}
    >
      <p>{hint}</p>
      <button type="button" className="btn" disabled={disabled} onClick={() => input.current?.click()}>
        {buttonLabel}
      </button>
      <input
        ref={input}
        type="file"
        accept={accept}
        multiple={multiple}
        disabled={disabled}
        className="visually-hidden"
        tabIndex={-1}
        aria-label={buttonLabel}
        data-input={inputName}
        onChange={(event) => {
          onFiles(Array.from(event.target.files ?? []));
          event.target.value = '';
        }}
      />
    </div>
  );
}
