import { useState } from "react";
import { commands, type ApiError, type ImportFormat } from "./bindings";
import { failed } from "./loaded";
import { describe } from "./errors";
import { count } from "./format";
import { JobBar, useJob } from "./jobs";
import { HistoryFacts, historyWords, useHistoryFacts } from "./ImportHistory";

const FORMATS: { value: ImportFormat; label: string }[] = [
  { value: "seed", label: "Memories document (JSON)" },
  { value: "backup", label: "Full backup (JSON Lines)" },
  { value: "graph", label: "MCP memory server (memory.json)" },
];

// What each format's export counts: memories, the history's changes, the graph's entries.
const UNITS: Record<ImportFormat, [string, string]> = {
  seed: ["memory", "memories"],
  backup: ["change", "changes"],
  graph: ["entry", "entries"],
};

type OnDuplicate = "stop" | "skip" | "merge";

// Import a file (the format is found by itself: Strata's own, or ChatGPT's, Claude's or
// mem0's exports) and export in any of the three formats, each with progress and Cancel. A bad
// or stopped import changes nothing; one that met memories already stored says which and
// offers to merge them or skip them. Imported conversations are then read for facts.
export function Transfer({ onImported }: { onImported: () => void }) {
  const job = useJob();
  const facts = useHistoryFacts();
  const [format, setFormat] = useState<ImportFormat>("seed");
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The file whose import stopped at a memory already stored, to import again with a choice.
  const [again, setAgain] = useState<{ name: string; text: string } | null>(null);

  const importText = async (name: string, text: string, onDuplicate: OnDuplicate) => {
    setError(null);
    setNotice(null);
    setAgain(null);
    const res = await job.run(`Importing ${name}`, (id, ch) => commands.importFile(id, name, text, onDuplicate, ch));
    if (res.status === "ok" && res.data.history) {
      const h = res.data.history;
      setNotice(historyWords(h));
      onImported();
      if (h.tool !== "mem0" && h.sessions.length > 0) facts.read(h.sessions);
    } else if (res.status === "ok" && res.data.memories) {
      const m = res.data.memories;
      const what = m.format === "graph" ? "entities and relations" : "memories";
      setNotice(`Imported ${name}: ${m.summary ?? `${m.imported} ${what}`}.`);
      onImported();
    } else if (res.status === "ok") {
      setError(`${name} held nothing to import.`);
    } else if (isDuplicate(res.error)) {
      setError(res.error.message);
      setAgain({ name, text });
    } else setError(describe(res.error));
  };

  const exportFile = async () => {
    setError(null);
    setNotice(null);
    // The system's Save dialog, in the Downloads folder on a dated name; cancelled: nothing.
    const chosen = await commands.chooseExportPath(format);
    if (failed(chosen, setError)) return;
    if (!chosen.data) return;
    const path = chosen.data;
    const res = await job.run("Exporting", (id, ch) => commands.exportFile(id, format, path, ch));
    if (!failed(res, setError)) setNotice(`Exported ${count(res.data.written, ...UNITS[format])} to ${res.data.path}.`);
  };

  return (
    <div className="transfer">
      <label className="import">
        Import a file…
        <input
          id="import"
          type="file"
          accept=".json,.jsonl"
          disabled={job.running || facts.job.running}
          onChange={(e) => {
            const file = e.target.files?.[0];
            e.target.value = "";
            if (file) file.text().then((text) => importText(file.name, text, "stop"));
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
        <button id="export" onClick={exportFile} disabled={job.running}>
          Save as…
        </button>
      </details>
      <JobBar job={job} />
      <HistoryFacts facts={facts} />
      {notice && (
        <div className="notice" id="notice">
          {notice}
        </div>
      )}
      {error && (
        <div className="error" role="alert" id="transfer-error">
          {error}
          {again && (
            <div className="actions">
              <button id="import-merge" onClick={() => importText(again.name, again.text, "merge")} disabled={job.running}>
                Merge
              </button>
              <button id="import-skip" onClick={() => importText(again.name, again.text, "skip")} disabled={job.running}>
                Skip those
              </button>
            </div>
          )}
        </div>
      )}
    </div>
  );
}

// An import stopped at a memory already stored: its message says which, in plain words.
function isDuplicate(e: unknown): e is ApiError {
  return !!e && typeof e === "object" && "code" in e && (e as ApiError).code === "duplicate_key";
}
