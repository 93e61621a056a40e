import { useEffect, useState } from "react";
import { commands, type DatasetView, type PassageView, type RowsView } from "./bindings";
import { answered, failed } from "./loaded";
import { day } from "./format";
import { RowsTable, sizeOf } from "./DatasetRows";
import { AskTable, SearchFiles } from "./DatasetAsk";

const PAGE = 50;

// Previous and next, with where the page is.
function Pager({ from, shown, total, unit, onMove }: { from: number; shown: number; total: number; unit: string; onMove: (to: number) => void }) {
  return (
    <div className="pager" id="dataset-pager">
      <button disabled={from === 0} onClick={() => onMove(Math.max(0, from - PAGE))}>
        Previous
      </button>
      <span>
        {shown === 0 ? `No ${unit}` : `${unit[0].toUpperCase()}${unit.slice(1)} ${(from + 1).toLocaleString()}–${(from + shown).toLocaleString()} of ${total.toLocaleString()}`}
      </span>
      <button disabled={from + shown >= total} onClick={() => onMove(from + PAGE)}>
        Next
      </button>
    </div>
  );
}

// A document's pages and headings, each taking the reader to its first passage.
function Outline({ dataset: d, onGo }: { dataset: DatasetView; onGo: (offset: number) => void }) {
  if (d.sections.length < 2) return null;
  const label = (s: DatasetView["sections"][number]) =>
    s.page != null && s.depth === 0
      ? `Page ${s.page}${s.heading ? ` — ${s.heading}` : ""}`
      : `${"\u00a0\u00a0".repeat(Math.max(0, s.depth - 1))}${s.heading ?? ""}`;
  const go = async (i: number) => {
    const s = d.sections[i];
    const r = await commands.datasetSection(d.name, s.page ?? null, s.line);
    if (!failed(r)) onGo(r.data);
  };
  return (
    <label className="outline">
      Go to{" "}
      <select id="document-outline" defaultValue="" onChange={(e) => e.target.value !== "" && go(Number(e.target.value))}>
        <option value="" disabled>
          a page or heading…
        </option>
        {d.sections.map((s, i) => (
          <option key={i} value={i}>
            {label(s)}
          </option>
        ))}
      </select>
    </label>
  );
}

// A table a page of rows at a time, or a document a page of passages at a time, each with
// its page, heading and lines.
function Pages({ dataset: d }: { dataset: DatasetView }) {
  const [from, setFrom] = useState(0);
  const [rows, setRows] = useState<RowsView | null>(null);
  const [passages, setPassages] = useState<PassageView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (d.table) answered(commands.datasetRows(d.name, from, PAGE), setRows, setError);
    else answered(commands.datasetPassages(d.name, from, PAGE), setPassages, setError);
  }, [d.name, from]);
  if (error) return <div className="error">{error}</div>;
  const total = d.table ? d.rows : d.passages;
  const shown = d.table ? (rows?.rows.length ?? 0) : (passages?.length ?? 0);
  return (
    <div className="dataset-pages">
      {!d.table && <Outline dataset={d} onGo={setFrom} />}
      {d.table && rows && <RowsTable view={rows} first={from + 1} />}
      {!d.table &&
        passages?.map((p, i) => (
          <div className="passage" key={i}>
            <div className="citation">{p.place}</div>
            <div className="passage-text">{p.text}</div>
          </div>
        ))}
      <Pager from={from} shown={shown} total={total} unit={d.table ? "rows" : "passages"} onMove={setFrom} />
    </div>
  );
}

// One dataset: where it came from, what reading noticed, its rows or passages, asking or
// searching it, and forgetting it.
export function DatasetPage({ dataset: d, onForgotten }: { dataset: DatasetView; onForgotten: () => void }) {
  const [tab, setTab] = useState<"see" | "ask">("see");
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const forget = async () => {
    setConfirming(false);
    const res = await commands.forgetDataset(d.name);
    if (!failed(res, setError)) onForgotten();
  };
  return (
    <section className="dataset-page" id="dataset-page" aria-label={d.name}>
      <h3>{d.name}</h3>
      <div className="muted" id="dataset-about">
        {d.table ? "A table" : "A document"} from {d.source}, loaded {day(d.loaded)}: {sizeOf(d)}.
        {d.table && ` Columns: ${d.columns.join(", ")}.`}
        {d.passages > d.embedded && ` ${d.passages - d.embedded} of its passages are found by keyword only for now.`}
      </div>
      {d.notes.map((n) => (
        <div className="notice" key={n}>
          {n}
        </div>
      ))}
      <div className="tabs" role="tablist">
        <button role="tab" id="tab-see" aria-selected={tab === "see"} className={tab === "see" ? "active" : ""} onClick={() => setTab("see")}>
          {d.table ? "Rows" : "Pages"}
        </button>
        <button role="tab" id="tab-ask" aria-selected={tab === "ask"} className={tab === "ask" ? "active" : ""} onClick={() => setTab("ask")}>
          {d.table ? "Ask this table" : "Search this document"}
        </button>
      </div>
      {tab === "see" && <Pages dataset={d} />}
      {tab === "ask" && (d.table ? <AskTable name={d.name} /> : <SearchFiles only={d.name} />)}
      {error && <div className="error">{error}</div>}
      {confirming ? (
        <div className="confirm" role="alertdialog" id="dataset-forget-confirm">
          Forget {d.name}? Everything it holds, its words and its search vectors are erased from the store. This cannot be undone.{" "}
          <button className="danger" id="dataset-forget-yes" onClick={forget}>
            Forget it
          </button>{" "}
          <button onClick={() => setConfirming(false)} autoFocus>
            Keep it
          </button>
        </div>
      ) : (
        <button className="danger" id="dataset-forget" onClick={() => setConfirming(true)}>
          Forget this file
        </button>
      )}
    </section>
  );
}
