import { useEffect, useState } from "react";
import { getCurrentWebview } from "@tauri-apps/api/webview";
import { commands } from "./bindings";
import { failed, useLoaded } from "./loaded";
import { JobBar, useJob } from "./jobs";
import { count, day } from "./format";
import { DatasetPage } from "./DatasetPage";
import { SearchFiles } from "./DatasetAsk";
import { sizeOf } from "./DatasetRows";

// Loading files (chosen in the Open dialog, or dropped on the window) with progress and
// Cancel; what was loaded is said in sentences.
function useLoading(active: boolean, onLoaded: (names: string[]) => void) {
  const job = useJob();
  const [said, setSaid] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const load = async (paths: string[]) => {
    if (paths.length === 0 || job.running) return;
    setError(null);
    setSaid([]);
    const res = await job.run(count(paths.length, "file", "files"), (id, ch) => commands.loadDatasets(id, paths, ch));
    if (failed(res, setError)) return;
    const waiting = res.data.pending;
    setSaid([
      ...res.data.said,
      ...(waiting > 0 ? [`${count(waiting, "passage is", "passages are")} searchable by keyword only until they are made searchable by meaning.`] : []),
    ]);
    onLoaded(res.data.names);
  };
  const choose = async () => {
    const res = await commands.chooseDatasetFiles();
    if (!failed(res, setError) && res.data) load(res.data);
  };
  // Files dropped anywhere on the window are loaded while this screen is shown.
  const [dropping, setDropping] = useState(false);
  useEffect(() => {
    if (!active) return setDropping(false);
    // The listener is registered asynchronously: one that arrives after the screen was left
    // is removed at once.
    let stop: (() => void) | undefined;
    let left = false;
    getCurrentWebview()
      .onDragDropEvent((e) => {
        if (e.payload.type === "drop") load(e.payload.paths);
      })
      .then((f) => {
        if (left) return f();
        stop = f;
        setDropping(true);
      })
      .catch(() => setDropping(false));
    return () => {
      left = true;
      stop?.();
    };
  }, [job.running, active]);
  return { job, said, error, choose, dropping };
}

// The datasets: the person's tables and documents beside their memories. Load files, pick one
// to see, ask and search it, or search them all.
export function Datasets({ active }: { active: boolean }) {
  const { data: list, error: listError, reload } = useLoaded(active, () => commands.datasets());
  const [open, setOpen] = useState<string | null>(null);
  const loading = useLoading(active, (names) => {
    reload();
    setOpen(names[0] ?? null);
  });
  const shown = list?.find((d) => d.name === open) ?? null;
  return (
    <div className="datasets" id="datasets" data-drop={loading.dropping ? "ready" : "off"}>
      <div className="screen-head">
        <h2>Your files</h2>
        <button id="datasets-add" onClick={loading.choose} disabled={loading.job.running}>
          Add files…
        </button>
      </div>
      <p className="muted intro">
        Tables (CSV, TSV, JSON, Excel) and documents (Markdown, text, web pages, PDF) kept beside your memories. Ask them
        questions, search them, and let chat answers use them. Drop files on this window, or choose them with Add files.
      </p>
      <JobBar job={loading.job} />
      {loading.error && (
        <div className="error" role="alert" id="datasets-error">
          {loading.error}
        </div>
      )}
      {loading.said.length > 0 && (
        <div className="notice" id="datasets-loaded">
          {loading.said.map((s) => (
            <div key={s}>{s}</div>
          ))}
        </div>
      )}
      {listError && <div className="error">{listError}</div>}
      {list && list.length === 0 && <div className="empty">No files yet. Spreadsheets, notes and PDFs you add appear here.</div>}
      {list && list.length > 0 && <SearchFiles />}
      <div className="datasets-body">
        <ul className="dataset-list" aria-label="Files">
          {list?.map((d) => (
            <li key={d.name}>
              <button className={`link ${d.name === open ? "current" : ""}`} onClick={() => setOpen(d.name)} id={`dataset-${d.name}`}>
                <span className="dataset-name">{d.name}</span>
                <span className="muted">
                  {d.table ? "Table" : "Document"} · {sizeOf(d)} · {day(d.loaded)}
                </span>
              </button>
            </li>
          ))}
        </ul>
        {shown && <DatasetPage key={shown.name} dataset={shown} onForgotten={() => (setOpen(null), reload())} />}
      </div>
    </div>
  );
}
