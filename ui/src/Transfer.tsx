import { useState } from "react";
import { commands, type ImportFormat } from "./bindings";
import { describe } from "./errors";
import { JobBar, useJob } from "./jobs";

const FORMATS: { value: ImportFormat; label: string }[] = [
  { value: "seed", label: "Memories document (JSON)" },
  { value: "backup", label: "Full backup (JSON Lines)" },
  { value: "graph", label: "MCP memory server (memory.json)" },
];

// Import a file (the format is found by itself) and export in any of the three formats, each
// with progress and Cancel. A bad or stopped import changes nothing.
export function Transfer({ onImported }: { onImported: () => void }) {
  const job = useJob();
  const [format, setFormat] = useState<ImportFormat>("seed");
  const [path, setPath] = useState("");
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const importFile = async (file: File) => {
    setError(null);
    setNotice(null);
    const text = await file.text();
    const res = await job.run(`Importing ${file.name}`, (id, ch) => commands.importFile(id, file.name, text, ch));
    if (res.status === "ok") {
      const what = res.data.format === "graph" ? "entities and relations" : "memories";
      setNotice(`Imported ${file.name}: ${res.data.imported} ${what}.`);
      onImported();
    } else setError(describe(res.error));
  };

  const exportFile = async () => {
    setError(null);
    setNotice(null);
    const res = await job.run("Exporting", (id, ch) => commands.exportFile(id, format, path.trim() || null, ch));
    if (res.status === "ok") setNotice(`Exported ${res.data.written} to ${res.data.path}.`);
    else setError(describe(res.error));
  };

  return (
    <div className="transfer">
      <label className="import">
        Import a file…
        <input
          id="import"
          type="file"
          accept=".json,.jsonl"
          disabled={job.running}
          onChange={(e) => {
            const file = e.target.files?.[0];
            e.target.value = "";
            if (file) importFile(file);
          }}
        />
      </label>
      <details className="export">
        <summary>Export…</summary>
        <select id="export-format" value={format} onChange={(e) => setFormat(e.target.value as ImportFormat)} aria-label="Export format">
          {FORMATS.map((f) => (
            <option key={f.value} value={f.value}>
              {f.label}
            </option>
          ))}
        </select>
        <input
          id="export-path"
          value={path}
          onChange={(e) => setPath(e.target.value)}
          placeholder="File (empty: your Downloads folder)"
          aria-label="Export to file"
        />
        <button id="export" onClick={exportFile} disabled={job.running}>
          Export
        </button>
      </details>
      <JobBar job={job} />
      {notice && (
        <div className="notice" id="notice">
          {notice}
        </div>
      )}
      {error && (
        <div className="error" role="alert" id="transfer-error">
          {error}
        </div>
      )}
    </div>
  );
}
