import { useCallback, useEffect, useRef, useState } from "react";
import {
  commands,
  type FilterForm,
  type MemoryView_Serialize as MemoryView,
  type RecallView_Serialize as RecallView,
} from "./bindings";
import { answered } from "./loaded";
import { ConceptsPanel } from "./Concepts";
import { Detail } from "./Detail";
import { describe } from "./errors";
import { count, kindWord, title } from "./format";
import { NewMemory } from "./NewMemory";
import { Selection } from "./Selection";
import { Transfer } from "./Transfer";
import { VirtualList } from "./VirtualList";

type Row = { memory: MemoryView; why?: RecallView["why"] };

const PAGE = 200;
const ROW_HEIGHT = 36;
// Keystrokes closer together than this make one search. A half-typed word does not flash
// unrelated results: it matches the words it begins (the search is `find`, not recall).
const SEARCH_DELAY_MS = 25;
// A search the box has kept this long is one the person settled on: it is recorded as a
// recall (a keystroke is not a use of a memory), so Analytics and the recall counts see it.
const SETTLED_MS = 1000;

// What an empty store says: the three kinds of memory and the tiers in plain words, and a
// way to see them with examples.
function FirstSteps({ onLoaded }: { onLoaded: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const loadExamples = async () => {
    const res = await commands.loadExamples();
    if (res.status === "ok") onLoaded();
    else setError(describe(res.error));
  };
  return (
    <div className="first-steps" id="first-steps">
      <h2>Nothing remembered yet</h2>
      <p>Strata keeps what your AI should remember, on this computer. It remembers three kinds of things:</p>
      <ul>
        <li>
          <strong>Facts</strong> — what is true about someone or something: “Favourite drink: oolong tea”.
        </li>
        <li>
          <strong>Episodes</strong> — what was said or happened, and when: a conversation, a trip, an appointment.
        </li>
        <li>
          <strong>Procedures</strong> — how to do something, step by step: “Reset the router: 1. unplug it…”.
        </li>
      </ul>
      <p>
        Memories sit in three tiers. Episodes start <strong>short-term</strong>: the working memory of their conversation. When
        it moves on, the useful ones move to <strong>medium-term</strong> and the rest fade (hidden, not erased). Facts and
        procedures start medium-term. What is used often and matters moves to <strong>long-term</strong>, and back when left
        unused for long. A pinned memory stays long-term.
      </p>
      <div className="actions">
        <button id="load-examples" onClick={loadExamples}>
          Load examples
        </button>
        <span className="muted">or click “New memory” (Ctrl+N) to add your own, or import a file.</span>
      </div>
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

// Search as you type (hybrid recall), or every memory newest first when the box is empty;
// the selected memory's details and history beside the list.
export function Memories({ opening, onOpened }: { opening: string | null; onOpened: () => void }) {
  const [query, setQuery] = useState("");
  const [type, setType] = useState("");
  const [tier, setTier] = useState("");
  const [origin, setOrigin] = useState("");
  // The list's order when nothing is searched: when added, when it happened, last recalled.
  const [order, setOrder] = useState("added");
  const [tag, setTag] = useState("");
  const [agent, setAgent] = useState("");
  const [session, setSession] = useState("");
  const [since, setSince] = useState("");
  const [until, setUntil] = useState("");
  const [rows, setRows] = useState<Row[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [selected, setSelected] = useState<MemoryView | null>(null);
  const [why, setWhy] = useState<RecallView["why"] | null>(null);
  const [error, setError] = useState<string | null>(null);
  // What the last forget erased, said until the person opens or creates something else.
  const [forgotten, setForgotten] = useState<string | null>(null);
  // The memories ticked for acting on at once.
  const [picked, setPicked] = useState<string[]>([]);
  const pick = (id: string, on: boolean) => setPicked((old) => (on ? [...old, id] : old.filter((x) => x !== id)));
  const [elapsed, setElapsed] = useState<number | null>(null);
  const [shown, setShown] = useState("");
  // How many memories match the words searched, however many are shown.
  const [matching, setMatching] = useState<number | null>(null);
  // How many memories the store (or the filters) hold in all.
  const [total, setTotal] = useState<number | null>(null);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState(false);
  // The concepts panel, in place of a memory's details.
  const [concepts, setConcepts] = useState(false);
  const seq = useRef(0);
  const loadingMore = useRef(false);
  const search = useRef<HTMLInputElement>(null);

  const filter: FilterForm = {
    types: type ? [type] : [],
    tiers: tier ? [tier] : [],
    tags: tag.trim() ? [tag.trim()] : [],
    since: since.trim() || null,
    until: until.trim() || null,
    agent: agent.trim() || null,
    session: session.trim() || null,
    origin: origin || null,
  };
  const filterKey = JSON.stringify({ filter, order });

  const load = useCallback(
    async (q: string) => {
      const { filter, order } = JSON.parse(filterKey) as { filter: FilterForm; order: string };
      const mine = ++seq.current;
      const started = performance.now();
      const r = q.trim()
        ? await commands.find(q, filter, 50).then((res) =>
            res.status === "ok"
              ? { ok: res.data.hits.map((x) => ({ memory: x.memory, why: x.why })), next: null, matching: res.data.matching }
              : { err: res.error },
          )
        : await commands.listMemories(filter, order, PAGE, null).then((res) =>
            res.status === "ok" ? { ok: res.data.items.map((m) => ({ memory: m })), next: res.data.next_cursor ?? null } : { err: res.error },
          );
      if (mine !== seq.current) return; // a newer keystroke won
      if ("err" in r) {
        setError(describe(r.err));
        return;
      }
      setError(null);
      setRows(r.ok!);
      setMatching("matching" in r && typeof r.matching === "number" ? r.matching : null);
      setShown(q);
      setCursor(r.next);
      // Rendered: the time from the keystroke's request to the next frame with the results.
      requestAnimationFrame(() => setElapsed(Math.round(performance.now() - started)));
    },
    [filterKey],
  );

  // How many memories the filters hold: counted when they change (or something was written),
  // not on every keystroke of a search.
  const [written, setWritten] = useState(0);
  const reload = () => {
    setWritten((n) => n + 1);
    load(query);
  };
  useEffect(() => {
    const { filter } = JSON.parse(filterKey) as { filter: FilterForm };
    answered(commands.countMemories(filter), setTotal);
  }, [filterKey, written]);

  useEffect(() => {
    const t = setTimeout(() => load(query), query ? SEARCH_DELAY_MS : 0);
    return () => clearTimeout(t);
  }, [query, load]);

  useEffect(() => {
    if (!query.trim()) return;
    const t = setTimeout(() => {
      const { filter } = JSON.parse(filterKey) as { filter: FilterForm };
      commands.searched(query, filter, 50);
    }, SETTLED_MS);
    return () => clearTimeout(t);
  }, [query, filterKey]);

  // Each page fetched (or thrown away because the list was reloaded meanwhile) gives `more` a
  // new identity, so the list asks again if its end is still in view: a scroll that arrived
  // while a page was loading is not lost.
  const [pagesDone, setPagesDone] = useState(0);
  const more = useCallback(async () => {
    if (!cursor || query.trim() || loadingMore.current) return;
    loadingMore.current = true;
    const mine = seq.current;
    const { filter, order } = JSON.parse(filterKey) as { filter: FilterForm; order: string };
    const res = await commands.listMemories(filter, order, PAGE, cursor);
    loadingMore.current = false;
    setPagesDone((n) => n + 1);
    if (mine !== seq.current) return;
    if (res.status === "ok") {
      setRows((old) => [...old, ...res.data.items.map((m) => ({ memory: m }))]);
      setCursor(res.data.next_cursor ?? null);
    } else setError(describe(res.error));
  }, [cursor, query, filterKey, pagesDone]);

  const open = (m: MemoryView, because: RecallView["why"] | null = null) => {
    setForgotten(null);
    setWhy(because);
    setCreating(false);
    setEditing(false);
    setConcepts(false);
    setSelected(m);
  };

  const openById = async (id: string) => {
    const res = await commands.getMemory(id);
    if (res.status === "ok") open(res.data);
    else setError(describe(res.error));
  };

  // A memory another screen asked to show.
  useEffect(() => {
    if (!opening) return;
    openById(opening).then(onOpened);
  }, [opening]);

  // Keyboard: Ctrl+N new, / search, Escape closes a form or clears the search, E edits,
  // ↑ ↓ move through the list.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement || e.target instanceof HTMLSelectElement;
      if ((e.ctrlKey || e.metaKey) && e.key === "n") {
        e.preventDefault();
        setEditing(false);
        setCreating(true);
      } else if (e.key === "Escape") {
        if (creating || editing) {
          setCreating(false);
          setEditing(false);
        } else if (document.activeElement === search.current) setQuery("");
      } else if (!typing && e.key === "/") {
        e.preventDefault();
        search.current?.focus();
      } else if (!typing && e.key === "e" && selected) {
        setEditing(true);
      } else if ((e.key === "ArrowDown" || e.key === "ArrowUp") && (!typing || e.target === search.current) && rows.length > 0) {
        e.preventDefault();
        const at = selected ? rows.findIndex((r) => r.memory.id === selected.id) : -1;
        const next = Math.min(rows.length - 1, Math.max(0, at + (e.key === "ArrowDown" ? 1 : -1)));
        open(rows[next].memory, rows[next].why ?? null);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [creating, editing, selected, rows]);

  const filtered = type || tier || tag || agent || session || since || until || origin;
  return (
    <div className="memories">
      <section className="list">
        <input
          id="search"
          ref={search}
          className="search"
          placeholder="Search your memories… ( / )"
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
          <select id="filter-origin" value={origin} onChange={(e) => setOrigin(e.target.value)} aria-label="Where from">
            <option value="">From anywhere</option>
            <option value="person">Written by you</option>
            <option value="imported">Imported</option>
            <option value="conversation">From conversations</option>
            <option value="tool">Added by AI tools</option>
          </select>
          <select id="order" value={order} onChange={(e) => setOrder(e.target.value)} aria-label="Order" disabled={!!query.trim()} title={query.trim() ? "Search results are in order of how well they match" : undefined}>
            <option value="added">Newest added first</option>
            <option value="occurred">Latest to happen first</option>
            <option value="recalled">Last recalled first</option>
          </select>
        </div>
        <details className="filters more-filters">
          <summary>Scope and dates</summary>
          <input id="filter-agent" value={agent} onChange={(e) => setAgent(e.target.value)} placeholder="Agent (its private memories)" aria-label="Agent" />
          <input id="filter-session" value={session} onChange={(e) => setSession(e.target.value)} placeholder="Session" aria-label="Session" />
          <label>
            From <input id="filter-since" value={since} onChange={(e) => setSince(e.target.value)} placeholder="2025-05-01, last Saturday…" />
          </label>
          <label>
            to <input id="filter-until" value={until} onChange={(e) => setUntil(e.target.value)} placeholder="yesterday, in May 2023…" />
          </label>
        </details>
        <div className="actions">
          <button
            id="new"
            className="new"
            onClick={() => {
              setEditing(false);
              setCreating(true);
            }}
            title="Add a memory (Ctrl+N)"
          >
            New memory
          </button>
          <button
            id="concepts-open"
            onClick={() => {
              setCreating(false);
              setEditing(false);
              setSelected(null);
              setConcepts(true);
            }}
            title="Groups of related memories, each with a name and a summary"
          >
            Concepts
          </button>
          <Transfer onImported={() => reload()} />
        </div>
        <div className="meta" id="meta" data-query={shown} title={elapsed !== null ? `Shown in ${elapsed} ms` : undefined}>
          {total === null
            ? ""
            : shown
              ? `${
                  matching !== null && matching > rows.length
                    ? `The best ${rows.length.toLocaleString()} of ${
                        matching > 1000 ? "more than 1,000" : matching.toLocaleString()
                      } found`
                    : `${rows.length.toLocaleString()} found`
                } · ${total.toLocaleString()} ${filtered ? "match the filters" : "memories in all"}`
              : `${count(total, "memory", "memories")}${filtered ? " match the filters" : ""}`}
        </div>
        {error && (
          <div className="error" role="alert">
            {error}
          </div>
        )}
        {picked.length > 0 && (
          <Selection
            ids={picked}
            onClear={() => setPicked([])}
            onDone={(said) => {
              setPicked([]);
              setSelected(null);
              setForgotten(said);
              reload();
            }}
          />
        )}
        {forgotten && (
          <div className="notice" id="forgotten" role="status">
            {forgotten}
          </div>
        )}
        {rows.length === 0 && !error && (
          <div className="empty">
            {query ? (
              <p>Nothing matches “{query}”.</p>
            ) : filtered ? (
              <p>No memory matches these filters.</p>
            ) : (
              <FirstSteps onLoaded={() => reload()} />
            )}
          </div>
        )}
        <VirtualList
          id="rows"
          items={rows}
          rowHeight={ROW_HEIGHT}
          onEnd={more}
          render={(r) => (
            <div className={`row ${selected?.id === r.memory.id ? "selected" : ""}`} onClick={() => open(r.memory, r.why ?? null)}>
              <input
                type="checkbox"
                className="pick"
                checked={picked.includes(r.memory.id)}
                onClick={(e) => e.stopPropagation()}
                onChange={(e) => pick(r.memory.id, e.target.checked)}
                aria-label="Choose"
              />
              <span className={`kind ${r.memory.type}`}>{kindWord(r.memory)}</span>
              <span className="title">{title(r.memory)}</span>
            </div>
          )}
        />
      </section>
      <section className="detail">
        {creating && (
          <NewMemory
            onCancel={() => setCreating(false)}
            onCreated={(m) => {
              reload();
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
              reload();
              open(m);
            }}
          />
        )}
        {!creating && !selected && concepts && (
          <ConceptsPanel
            onOpen={openById}
            onClose={() => setConcepts(false)}
            onGrouped={() => reload()}
          />
        )}
        {!creating && !selected && !concepts && <div className="empty">Select a memory to see it in full.</div>}
        {!creating && !editing && selected && (
          <Detail
            memory={selected}
            why={why}
            onChanged={(m) => {
              // The row keeps the new state too: opening it again shows what was saved.
              setRows((old) => old.map((r) => (r.memory.id === m.id ? { ...r, memory: m } : r)));
              open(m, why);
            }}
            onEdit={() => setEditing(true)}
            onOpen={openById}
            onForgotten={(what) => {
              setSelected(null);
              setForgotten(what);
              reload();
            }}
          />
        )}
      </section>
    </div>
  );
}
