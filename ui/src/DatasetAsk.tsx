import { useState } from "react";
import { commands, type PassageView, type SqlView } from "./bindings";
import { failed } from "./loaded";
import { RowsTable } from "./DatasetRows";

// What a statement returned, under the statement itself so a person can check what was asked.
function SqlResult({ view }: { view: SqlView }) {
  const n = view.result.rows.length;
  return (
    <div className="sql-result" id="sql-result">
      <div className="muted">{view.model ? `${view.model} wrote this SQL:` : "The SQL run:"}</div>
      <pre className="sql" id="sql-shown">
        {view.sql}
      </pre>
      <RowsTable view={view.result} />
      <div className="muted" id="sql-count">
        {n === 1 ? "1 row" : `${n} rows`}
        {view.cut_off ? " (more were left out)" : ""} in {view.millis} ms.
      </div>
    </div>
  );
}

// A question in words over a table (the chat's model writes the SQL), or SQL written by hand.
export function AskTable({ name }: { name: string }) {
  const [question, setQuestion] = useState("");
  const [sql, setSql] = useState("");
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<SqlView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (ask: () => ReturnType<typeof commands.datasetSql>) => {
    setBusy(true);
    setError(null);
    setResult(null);
    const res = await ask();
    setBusy(false);
    if (!failed(res, setError)) setResult(res.data);
  };
  const settings = async () => {
    const s = await commands.settings();
    return failed(s) ? null : s.data.saved.chat;
  };
  return (
    <div className="ask-table">
      <form onSubmit={(e) => (e.preventDefault(), run(async () => commands.askDataset(name, question, await settings())))}>
        <input id="table-question" value={question} onChange={(e) => setQuestion(e.target.value)} placeholder="Ask a question of this table, e.g. What do I spend most on?" />
        <button id="table-ask" disabled={busy || !question.trim()}>
          Ask
        </button>
      </form>
      <details>
        <summary>Or write SQL yourself</summary>
        <form onSubmit={(e) => (e.preventDefault(), run(() => commands.datasetSql(name, sql)))}>
          <textarea id="table-sql" value={sql} onChange={(e) => setSql(e.target.value)} placeholder={`SELECT * FROM ${name} LIMIT 10`} rows={3} />
          <button id="table-run" disabled={busy || !sql.trim()}>
            Run
          </button>
        </form>
      </details>
      {busy && <div className="muted">Working it out…</div>}
      {error && (
        <div className="error" role="alert" id="table-error">
          {error}
        </div>
      )}
      {result && <SqlResult view={result} />}
    </div>
  );
}

// Search the files (one, or all) by keyword and meaning; each passage with its file and place.
export function SearchFiles({ only }: { only?: string }) {
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<PassageView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = only ? "document" : "files";
  const search = async () => {
    setError(null);
    const res = await commands.searchDatasets(only ? [only] : [], query);
    if (!failed(res, setError)) setHits(res.data);
  };
  return (
    <div className="search-files">
      <form onSubmit={(e) => (e.preventDefault(), search())}>
        <input id={`${id}-search`} value={query} onChange={(e) => setQuery(e.target.value)} placeholder={only ? "Find in this document…" : "Search all your files…"} />
        <button id={`${id}-go`} disabled={!query.trim()}>
          Search
        </button>
      </form>
      {error && <div className="error">{error}</div>}
      {hits && hits.length === 0 && <div className="muted">Nothing in your files matches that.</div>}
      {hits?.map((h, i) => (
        <div className={`passage hit ${id}-hit`} key={i}>
          <div className="citation">
            [{i + 1}] {h.source}, {h.place}
          </div>
          <div className="passage-text">{h.text}</div>
        </div>
      ))}
    </div>
  );
}
