import { useCallback, useEffect, useRef, useState } from "react";
import {
  commands,
  type FilterForm,
  type MemoryView_Serialize as MemoryView,
  type RecallView_Serialize as RecallView,
} from "./bindings";
import { type Answer, answered, failed } from "./loaded";

export type Row = { memory: MemoryView; why?: RecallView["why"] };

const PAGE = 200;
// Keystrokes closer together than this make one search. A half-typed word does not flash
// unrelated results: it matches the words it begins (the search is `find`, not recall).
const SEARCH_DELAY_MS = 25;
// A search the box has kept this long is one the person settled on: it is recorded as a
// recall (a keystroke is not a use of a memory), so Analytics and the recall counts see it.
const SETTLED_MS = 1000;

type Asked = { filter: FilterForm; order: string };
type Page = { rows: Row[]; next: string | null; matching: number | null };

// The first page: the best matches of the words searched, or the list in its order.
async function page(q: string, filter: FilterForm, order: string): Promise<Answer<Page>> {
  if (q.trim()) {
    const res = await commands.find(q, filter, 50);
    if (failed(res)) return res;
    const rows = res.data.hits.map((x) => ({ memory: x.memory, why: x.why }));
    return { status: "ok", data: { rows, next: null, matching: res.data.matching ?? null } };
  }
  const res = await commands.listMemories(filter, order, PAGE, null);
  if (failed(res)) return res;
  return { status: "ok", data: { rows: res.data.items.map((m) => ({ memory: m })), next: res.data.next_cursor ?? null, matching: null } };
}

// The memory list: search as you type (hybrid recall) when the box holds words, else every
// memory in the filters' order, a page at a time as the list scrolls; with how many match and
// how many the filters hold. `asked` is the filters and order as JSON (a stable key).
export function useMemoryList(query: string, asked: string) {
  const [rows, setRows] = useState<Row[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [elapsed, setElapsed] = useState<number | null>(null);
  // The words whose results are shown.
  const [shown, setShown] = useState("");
  // How many memories match the words searched, however many are shown.
  const [matching, setMatching] = useState<number | null>(null);
  // How many memories the store (or the filters) hold in all.
  const [total, setTotal] = useState<number | null>(null);
  const seq = useRef(0);
  const loadingMore = useRef(false);

  const load = useCallback(
    async (q: string) => {
      const { filter, order } = JSON.parse(asked) as Asked;
      const mine = ++seq.current;
      const started = performance.now();
      const r = await page(q, filter, order);
      if (mine !== seq.current) return; // a newer keystroke won
      if (failed(r, setError)) return;
      setError(null);
      setRows(r.data.rows);
      setMatching(r.data.matching);
      setShown(q);
      setCursor(r.data.next);
      // Rendered: the time from the keystroke's request to the next frame with the results.
      requestAnimationFrame(() => setElapsed(Math.round(performance.now() - started)));
    },
    [asked],
  );

  // How many memories the filters hold: counted when they change (or something was written),
  // not on every keystroke of a search.
  const [written, setWritten] = useState(0);
  const reload = () => {
    setWritten((n) => n + 1);
    load(query);
  };
  useEffect(() => {
    const { filter } = JSON.parse(asked) as Asked;
    answered(commands.countMemories(filter), setTotal);
  }, [asked, written]);

  useEffect(() => {
    const t = setTimeout(() => load(query), query ? SEARCH_DELAY_MS : 0);
    return () => clearTimeout(t);
  }, [query, load]);

  useEffect(() => {
    if (!query.trim()) return;
    const t = setTimeout(() => {
      const { filter } = JSON.parse(asked) as Asked;
      commands.searched(query, filter, 50);
    }, SETTLED_MS);
    return () => clearTimeout(t);
  }, [query, asked]);

  // Each page fetched (or thrown away because the list was reloaded meanwhile) gives `more` a
  // new identity, so the list asks again if its end is still in view: a scroll that arrived
  // while a page was loading is not lost.
  const [pagesDone, setPagesDone] = useState(0);
  const more = useCallback(async () => {
    if (!cursor || query.trim() || loadingMore.current) return;
    loadingMore.current = true;
    const mine = seq.current;
    const { filter, order } = JSON.parse(asked) as Asked;
    const res = await commands.listMemories(filter, order, PAGE, cursor);
    loadingMore.current = false;
    setPagesDone((n) => n + 1);
    if (mine !== seq.current) return;
    if (failed(res, setError)) return;
    setRows((old) => [...old, ...res.data.items.map((m) => ({ memory: m }))]);
    setCursor(res.data.next_cursor ?? null);
  }, [cursor, query, asked, pagesDone]);

  return { rows, setRows, error, setError, elapsed, shown, matching, total, more, reload };
}
