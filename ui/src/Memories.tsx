import { useCallback, useEffect, useRef, useState } from "react";
import {
  commands,
  type FilterForm,
  type EventView_Serialize as EventView,
  type MemoryView_Serialize as MemoryView,
  type RecallView_Serialize as RecallView,
} from "./bindings";
import { describe } from "./errors";
import { NewMemory } from "./NewMemory";
import { title, when } from "./format";

type Row = { memory: MemoryView; why?: RecallView["why"] };

const PAGE = 100;

// Search as you type (hybrid recall), or the newest memories when the box is empty; the
// selected memory's details and history beside the list.
export function Memories() {
  const [query, setQuery] = useState("");
  const [type, setType] = useState("");
  const [tier, setTier] = useState("");
  const [tag, setTag] = useState("");
  const [rows, setRows] = useState<Row[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [selected, setSelected] = useState<MemoryView | null>(null);
  const [history, setHistory] = useState<EventView[]>([]);
  const [why, setWhy] = useState<RecallView["why"] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [elapsed, setElapsed] = useState<number | null>(null);
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const seq = useRef(0);

  const filter: FilterForm = {
    types: type ? [type] : [],
    tiers: tier ? [tier] : [],
    tags: tag.trim() ? [tag.trim()] : [],
    since: null,
    until: null,
  };
  const filterKey = JSON.stringify(filter);

  const load = useCallback(async (q: string) => {
    const filter = JSON.parse(filterKey) as FilterForm;
    const mine = ++seq.current;
    const started = performance.now();
    const r = q.trim()
      ? await commands.recall(q, filter, 50).then((res) =>
          res.status === "ok" ? { ok: res.data.map((x) => ({ memory: x.memory, why: x.why })), next: null } : { err: res.error },
        )
      : await commands.listMemories(filter, PAGE, null).then((res) =>
          res.status === "ok" ? { ok: res.data.items.map((m) => ({ memory: m })), next: res.data.next_cursor ?? null } : { err: res.error },
        );
    if (mine !== seq.current) return; // a newer keystroke won
    if ("err" in r) {
      setError(describe(r.err));
      return;
    }
    setError(null);
    setRows(r.ok!);
    setCursor(r.next);
    setElapsed(Math.round(performance.now() - started));
  }, [filterKey]);

  useEffect(() => {
    const t = setTimeout(() => load(query), query ? 80 : 0);
    return () => clearTimeout(t);
  }, [query, load]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key === "n") {
        e.preventDefault();
        setEditing(false);
        setCreating(true);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  const more = async () => {
    if (!cursor) return;
    const res = await commands.listMemories(filter, PAGE, cursor);
    if (res.status === "ok") {
      setRows((old) => [...old, ...res.data.items.map((m) => ({ memory: m }))]);
      setCursor(res.data.next_cursor ?? null);
    } else setError(describe(res.error));
  };

  const open = async (m: MemoryView, because: RecallView["why"] | null = null) => {
    setWhy(because);
    setCreating(false);
    setEditing(false);
    setSelected(m);
    const h = await commands.history(m.id);
    setHistory(h.status === "ok" ? h.data : []);
  };

  // A change from the detail pane: show the memory as it now is, with its history.
  const act = async (p: ReturnType<typeof commands.pin>) => {
    const res = await p;
    if (res.status === "ok") open(res.data);
    else setError(describe(res.error));
  };

  const forget = async (m: MemoryView) => {
    if (!window.confirm(`Forget "${title(m)}"?\n\nIts content will be erased everywhere, history included. This cannot be undone.`)) return;
    const res = await commands.forget(m.id);
    if (res.status === "error") {
      setError(describe(res.error));
      return;
    }
    setSelected(null);
    setHistory([]);
    load(query);
  };

  return (
    <div className="memories">
      <section className="list">
        <input
          id="search"
          className="search"
          placeholder="Search your memories…"
          value={query}
          autoFocus
          onChange={(e) => setQuery(e.target.value)}
        />
        <div className="filters">
          <select id="filter-type" value={type} onChange={(e) => setType(e.target.value)} aria-label="Type">
            <option value="">Any type</option>
            <option value="semantic">Facts</option>
            <option value="episodic">Episodes</option>
            <option value="procedural">Procedures</option>
          </select>
          <select id="filter-tier" value={tier} onChange={(e) => setTier(e.target.value)} aria-label="Tier">
            <option value="">Any tier</option>
            <option value="short">Short-term</option>
            <option value="medium">Medium-term</option>
            <option value="long">Long-term</option>
          </select>
          <input id="filter-tag" value={tag} onChange={(e) => setTag(e.target.value)} placeholder="Tag" aria-label="Tag" />
        </div>
        <button
          id="new"
          className="new"
          onClick={() => {
            setEditing(false);
            setCreating(true);
          }} title="Add a memory (Ctrl+N)">
          New memory
        </button>
        <label className="import">
          Import a file…
          <input
            id="import"
            type="file"
            accept=".json,.jsonl"
            onChange={async (e) => {
              const file = e.target.files?.[0];
              e.target.value = "";
              if (!file) return;
              setNotice(`Importing ${file.name}…`);
              const res = await commands.importText(file.name, await file.text());
              if (res.status === "ok") {
                setError(null);
                setNotice(`Imported ${file.name}: ${res.data.imported} ${res.data.format === "graph" ? "entities and relations" : "memories"}.`);
                load(query);
              } else {
                setNotice(null);
                setError(describe(res.error));
              }
            }}
          />
        </label>
        {notice && <div className="notice" id="notice">{notice}</div>}
        <div className="meta">
          {rows.length} {query ? "found" : "shown"}
          {elapsed !== null && <span> · {elapsed} ms</span>}
        </div>
        {error && <div className="error" role="alert">{error}</div>}
        {rows.length === 0 && !error && (
          <div className="empty">
            {query ? <p>Nothing matches “{query}”.</p> : <p>No memories yet. Click “New memory” (Ctrl+N) to add the first one.</p>}
          </div>
        )}
        <ul>
          {rows.map((r) => (
            <li key={r.memory.id} className={selected?.id === r.memory.id ? "selected" : ""} onClick={() => open(r.memory, r.why ?? null)}>
              <span className={`kind ${r.memory.type}`}>{r.memory.type}</span>
              <span className="title">{title(r.memory)}</span>
              {r.why && <span className="score">{(r.why.score ?? 0).toFixed(2)}</span>}
            </li>
          ))}
        </ul>
        {cursor && !query && (
          <button className="more" onClick={more}>
            Show more
          </button>
        )}
      </section>
      <section className="detail">
        {creating && (
          <NewMemory
            onCancel={() => setCreating(false)}
            onCreated={(m) => {
              load(query);
              open(m);
            }}
          />
        )}
        {editing && selected && (
          <NewMemory
            key={selected.id + selected.version}
            editing={selected}
            onCancel={() => setEditing(false)}
            onCreated={(m) => {
              load(query);
              open(m);
            }}
          />
        )}
        {!creating && !selected && <div className="empty">Select a memory to see it in full.</div>}
        {!creating && !editing && selected && (
          <div id="detail">
            <h2>{title(selected)}</h2>
            <dl>
              <dt>Type</dt>
              <dd>{selected.type}</dd>
              <dt>Tier</dt>
              <dd>
                <select id="tier" value={selected.tier} onChange={(e) => act(commands.moveTier(selected.id, e.target.value))}>
                  <option value="short">short (working memory)</option>
                  <option value="medium">medium (recent)</option>
                  <option value="long">long (persistent)</option>
                </select>
              </dd>
              <dt>Pinned</dt>
              <dd>
                <label>
                  <input
                    id="pinned"
                    type="checkbox"
                    checked={selected.pinned}
                    onChange={(e) => act(commands.pin(selected.id, e.target.checked))}
                  />{" "}
                  never moved down by maintenance
                </label>
              </dd>
              <dt>Tags</dt>
              <dd>{selected.tags.join(", ") || "none"}</dd>
              <dt>Importance</dt>
              <dd>{selected.importance}</dd>
              <dt>Created</dt>
              <dd>{when(selected.created_at)}</dd>
              <dt>From</dt>
              <dd>{selected.source.app}</dd>
            </dl>
            {selected.type === "semantic" && (
              <table className="facts">
                <tbody>
                  {Object.entries(selected.facts).map(([k, v]) => (
                    <tr key={k}>
                      <th>{k}</th>
                      <td>{typeof v === "string" ? v : JSON.stringify(v)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {selected.type === "procedural" && (
              <ol>
                {selected.steps.map((s, i) => (
                  <li key={i}>{s}</li>
                ))}
              </ol>
            )}
            {why && (
              <>
                <h3>Why it was recalled</h3>
                <table className="why-table" id="why">
                  <tbody>
                    <tr>
                      <th>Score</th>
                      <td>{(why.score ?? 0).toFixed(3)}</td>
                    </tr>
                    <tr>
                      <th>Match</th>
                      <td>
                        {(why.matched ?? 0).toFixed(3)}
                        {why.keyword_rank != null && ` · keywords #${why.keyword_rank}`}
                        {why.similarity != null && ` · meaning ${(why.similarity ?? 0).toFixed(2)}`}
                      </td>
                    </tr>
                    {why.time_phrase && (
                      <tr>
                        <th>Time</th>
                        <td>
                          “{why.time_phrase}” +{(why.time ?? 0).toFixed(3)}
                        </td>
                      </tr>
                    )}
                    <tr>
                      <th>Relevance</th>
                      <td>
                        recency +{(why.recency ?? 0).toFixed(3)} · use +{(why.frequency ?? 0).toFixed(3)} · importance +
                        {(why.importance ?? 0).toFixed(3)} · tier +{(why.tier ?? 0).toFixed(3)}
                      </td>
                    </tr>
                  </tbody>
                </table>
              </>
            )}
            <h3>History</h3>
            <ol className="timeline">
              {history.map((e) => (
                <li key={e.seq}>
                  <time>{when(e.at)}</time> {e.summary} <span className="who">{e.client ?? e.actor}</span>
                </li>
              ))}
            </ol>
            <button id="edit" className="edit" onClick={() => setEditing(true)}>
              Edit
            </button>
            <button className="danger" onClick={() => forget(selected)}>
              Forget…
            </button>
          </div>
        )}
      </section>
    </div>
  );
}
