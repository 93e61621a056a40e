import { useEffect, useRef, useState, type RefObject } from "react";
import { commands, type MemoryView_Serialize as MemoryView, type RecallView_Serialize as RecallView } from "./bindings";
import { ConceptsPanel } from "./Concepts";
import { Detail } from "./Detail";
import { failed } from "./loaded";
import { count, kindWord, title } from "./format";
import { FilterBar, filterForm, narrowed, useFilters } from "./MemoryFilters";
import { NewMemory } from "./NewMemory";
import { Selection } from "./Selection";
import { Transfer } from "./Transfer";
import { type Row, useMemoryList } from "./useMemoryList";
import { VirtualList } from "./VirtualList";

const ROW_HEIGHT = 36;

// What an empty store says: the three kinds of memory and the tiers in plain words, and a
// way to see them with examples.
function FirstSteps({ onLoaded }: { onLoaded: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const loadExamples = async () => {
    if (!failed(await commands.loadExamples(), setError)) onLoaded();
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

// The line under the filters: how many were found of how many, or how many there are.
function ListMeta(p: { total: number | null; shown: string; rows: number; matching: number | null; filtered: boolean; elapsed: number | null }) {
  const found =
    p.matching !== null && p.matching > p.rows
      ? `The best ${p.rows.toLocaleString()} of ${p.matching > 1000 ? "more than 1,000" : p.matching.toLocaleString()} found`
      : `${p.rows.toLocaleString()} found`;
  const words =
    p.total === null
      ? ""
      : p.shown
        ? `${found} · ${p.total.toLocaleString()} ${p.filtered ? "match the filters" : "memories in all"}`
        : `${count(p.total, "memory", "memories")}${p.filtered ? " match the filters" : ""}`;
  return (
    <div className="meta" id="meta" data-query={p.shown} title={p.elapsed !== null ? `Shown in ${p.elapsed} ms` : undefined}>
      {words}
    </div>
  );
}

// Add a memory, see the concepts, import or export.
function ListActions(p: { onNew: () => void; onConcepts: () => void; onImported: () => void }) {
  return (
    <div className="actions">
      <button id="new" className="new" onClick={p.onNew} title="Add a memory (Ctrl+N)">
        New memory
      </button>
      <button id="concepts-open" onClick={p.onConcepts} title="Groups of related memories, each with a name and a summary">
        Concepts
      </button>
      <Transfer onImported={p.onImported} />
    </div>
  );
}

// One row of the list: a box to tick it, its kind and its title.
function MemoryRow(p: { row: Row; selected: boolean; picked: boolean; onOpen: () => void; onPick: (on: boolean) => void }) {
  return (
    <div className={`row ${p.selected ? "selected" : ""}`} onClick={p.onOpen}>
      <input
        type="checkbox"
        className="pick"
        checked={p.picked}
        onClick={(e) => e.stopPropagation()}
        onChange={(e) => p.onPick(e.target.checked)}
        aria-label="Choose"
      />
      <span className={`kind ${p.row.memory.type}`}>{kindWord(p.row.memory)}</span>
      <span className="title">{title(p.row.memory)}</span>
    </div>
  );
}

// What the right side shows: a memory being added or edited, the concepts, or the memory
// opened, in full.
type Pane = { creating: boolean; editing: boolean; concepts: boolean; selected: MemoryView | null; why: RecallView["why"] | null };
const CLOSED: Pane = { creating: false, editing: false, concepts: false, selected: null, why: null };

type PaneProps = {
  pane: Pane;
  setPane: (p: Pane) => void;
  open: (m: MemoryView, why?: RecallView["why"] | null) => void;
  openById: (id: string) => void;
  reload: () => void;
  onChanged: (m: MemoryView) => void;
  onForgotten: (what: string) => void;
};

function DetailPane({ pane, setPane, open, openById, reload, onChanged, onForgotten }: PaneProps) {
  const { creating, editing, concepts, selected, why } = pane;
  const saved = (m: MemoryView) => {
    reload();
    open(m);
  };
  return (
    <section className="detail">
      {creating && <NewMemory onCancel={() => setPane({ ...pane, creating: false })} onCreated={saved} />}
      {editing && selected && (
        <NewMemory key={selected.id + selected.version} editing={selected} onCancel={() => setPane({ ...pane, editing: false })} onCreated={saved} />
      )}
      {!creating && !selected && concepts && <ConceptsPanel onOpen={openById} onClose={() => setPane({ ...pane, concepts: false })} onGrouped={reload} />}
      {!creating && !selected && !concepts && <div className="empty">Select a memory to see it in full.</div>}
      {!creating && !editing && selected && (
        <Detail
          memory={selected}
          why={why}
          onChanged={onChanged}
          onEdit={() => setPane({ ...pane, editing: true })}
          onOpen={openById}
          onForgotten={onForgotten}
        />
      )}
    </section>
  );
}

// Keyboard: Ctrl+N new, / search, Escape closes a form or clears the search, E edits,
// ↑ ↓ move through the list.
function useMemoryKeys(
  pane: Pane,
  setPane: (p: Pane) => void,
  rows: Row[],
  search: RefObject<HTMLInputElement | null>,
  clearSearch: () => void,
  open: (m: MemoryView, why?: RecallView["why"] | null) => void,
) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement || e.target instanceof HTMLSelectElement;
      if ((e.ctrlKey || e.metaKey) && e.key === "n") {
        e.preventDefault();
        setPane({ ...pane, editing: false, creating: true });
      } else if (e.key === "Escape") {
        if (pane.creating || pane.editing) setPane({ ...pane, creating: false, editing: false });
        else if (document.activeElement === search.current) clearSearch();
      } else if (!typing && e.key === "/") {
        e.preventDefault();
        search.current?.focus();
      } else if (!typing && e.key === "e" && pane.selected) {
        setPane({ ...pane, editing: true });
      } else if ((e.key === "ArrowDown" || e.key === "ArrowUp") && (!typing || e.target === search.current) && rows.length > 0) {
        e.preventDefault();
        const at = pane.selected ? rows.findIndex((r) => r.memory.id === pane.selected!.id) : -1;
        const next = Math.min(rows.length - 1, Math.max(0, at + (e.key === "ArrowDown" ? 1 : -1)));
        open(rows[next].memory, rows[next].why ?? null);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [pane, rows]);
}

// Search as you type (hybrid recall), or every memory newest first when the box is empty;
// the selected memory's details and history beside the list.
export function Memories({ opening, onOpened }: { opening: string | null; onOpened: () => void }) {
  const [query, setQuery] = useState("");
  const { filters, set } = useFilters();
  const asked = JSON.stringify({ filter: filterForm(filters), order: filters.order });
  const list = useMemoryList(query, asked);
  const [pane, setPane] = useState<Pane>(CLOSED);
  // What the last forget erased, said until the person opens or creates something else.
  const [forgotten, setForgotten] = useState<string | null>(null);
  // The memories ticked for acting on at once.
  const [picked, setPicked] = useState<string[]>([]);
  const pick = (id: string, on: boolean) => setPicked((old) => (on ? [...old, id] : old.filter((x) => x !== id)));
  const search = useRef<HTMLInputElement>(null);

  const open = (m: MemoryView, because: RecallView["why"] | null = null) => {
    setForgotten(null);
    setPane({ ...CLOSED, selected: m, why: because });
  };
  const openById = async (id: string) => {
    const res = await commands.getMemory(id);
    if (!failed(res, list.setError)) open(res.data);
  };
  // A memory another screen asked to show.
  useEffect(() => {
    if (!opening) return;
    openById(opening).then(onOpened);
  }, [opening]);
  useMemoryKeys(pane, setPane, list.rows, search, () => setQuery(""), open);
  const forgot = (what: string) => {
    setPane({ ...pane, selected: null });
    setForgotten(what);
    list.reload();
  };

  const filtered = narrowed(filters);
  const { rows, error } = list;
  return (
    <div className="memories">
      <section className="list">
        <input id="search" ref={search} className="search" placeholder="Search your memories… ( / )" value={query} autoFocus onChange={(e) => setQuery(e.target.value)} />
        <FilterBar filters={filters} set={set} searching={!!query.trim()} />
        <ListActions onNew={() => setPane({ ...pane, editing: false, creating: true })} onConcepts={() => setPane({ ...CLOSED, concepts: true })} onImported={list.reload} />
        <ListMeta total={list.total} shown={list.shown} rows={rows.length} matching={list.matching} filtered={filtered} elapsed={list.elapsed} />
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
              forgot(said);
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
            {query ? <p>Nothing matches “{query}”.</p> : filtered ? <p>No memory matches these filters.</p> : <FirstSteps onLoaded={list.reload} />}
          </div>
        )}
        <VirtualList
          id="rows"
          items={rows}
          rowHeight={ROW_HEIGHT}
          onEnd={list.more}
          render={(r) => (
            <MemoryRow
              row={r}
              selected={pane.selected?.id === r.memory.id}
              picked={picked.includes(r.memory.id)}
              onOpen={() => open(r.memory, r.why ?? null)}
              onPick={(on) => pick(r.memory.id, on)}
            />
          )}
        />
      </section>
      <DetailPane
        pane={pane}
        setPane={setPane}
        open={open}
        openById={openById}
        reload={list.reload}
        onChanged={(m) => {
          // The row keeps the new state too: opening it again shows what was saved.
          list.setRows((old) => old.map((r) => (r.memory.id === m.id ? { ...r, memory: m } : r)));
          open(m, pane.why);
        }}
        onForgotten={forgot}
      />
    </div>
  );
}
