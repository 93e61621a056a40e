import { useEffect, useState } from "react";
import { commands, type DatasetView, type FilePassageView } from "./bindings";
import { failed } from "./loaded";

// Which of the person's files (datasets) answers may draw on: the list is read again when the
// chat is shown (files may have been added or forgotten meanwhile); none is chosen at first.
export function useFilesChoice(active: boolean) {
  const [datasets, setDatasets] = useState<DatasetView[]>([]);
  const [chosen, setChosen] = useState<string[]>([]);
  useEffect(() => {
    if (!active) return;
    commands.datasets().then((r) => {
      if (failed(r)) return;
      setDatasets(r.data);
      setChosen((c) => c.filter((n) => r.data.some((d) => d.name === n)));
    });
  }, [active]);
  const toggle = (name: string) => setChosen((c) => (c.includes(name) ? c.filter((n) => n !== name) : [...c, name]));
  return { datasets, chosen, toggle };
}

// The files an answer may use, each ticked or not; nothing when there are none.
export function FilesChoice({ datasets, chosen, onToggle }: { datasets: DatasetView[]; chosen: string[]; onToggle: (name: string) => void }) {
  if (datasets.length === 0) return null;
  return (
    <fieldset className="files-choice" id="chat-files">
      <legend>Answers may also use these files:</legend>
      {datasets.map((d) => (
        <label key={d.name} title={`From ${d.source}`}>
          <input type="checkbox" name={`file-${d.name}`} checked={chosen.includes(d.name)} onChange={() => onToggle(d.name)} />{" "}
          {d.name}
        </label>
      ))}
    </fieldset>
  );
}

// The passages of files an answer's prompt held, those the answer cites first, each with its
// file, page or row, and its words.
export function FilesUsed({ files }: { files: FilePassageView[] }) {
  if (files.length === 0) return null;
  const ordered = [...files.filter((f) => f.cited), ...files.filter((f) => !f.cited)];
  return (
    <div className="files-used" id="files-used">
      <strong>From your files ({files.length})</strong>
      <ul>
        {ordered.map((f) => (
          <li key={f.label} className={f.cited ? "cited" : ""}>
            <span className="citation">
              [{f.label}] {f.source}, {f.place}
            </span>
            {f.cited && <span className="cited-tag"> · the answer rests on this</span>}
            <blockquote>{f.text}</blockquote>
          </li>
        ))}
      </ul>
    </div>
  );
}
