import { useEffect, useRef, useState } from "react";
import {
  commands,
  type DrilledMemory_Serialize as DrilledMemory,
  type MemoryDrill,
  type RangeForm,
  type RecallRowView_Serialize as RecallRowView,
  type ScoreParts_Serialize as ScoreParts,
} from "./bindings";
import { answered, failed } from "./loaded";
import { count, kindWord, title, when } from "./format";

// What is behind a point: memories (created, moved, never recalled) or recalls (all of a
// bucket, those that found nothing, one query's).
export type DrillWhat = { memories: MemoryDrill } | { recalls: "all" | "empty" | "query"; query?: string };

// The memories or recalls behind a point a person clicked; a memory opens in the browser.
export function Drill({
  what,
  range,
  heading,
  onOpenMemory,
  onClose,
}: {
  what: DrillWhat;
  range: RangeForm;
  heading: string;
  onOpenMemory: (id: string) => void;
  onClose: () => void;
}) {
  const [memories, setMemories] = useState<DrilledMemory[] | null>(null);
  const [recalls, setRecalls] = useState<RecallRowView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const panel = useRef<HTMLElement>(null);

  useEffect(() => {
    panel.current?.scrollIntoView({ block: "nearest" });
    if ("memories" in what)
      answered(commands.drillMemories(range, what.memories), setMemories, setError);
    else
      commands
        .drillRecalls(range, what.recalls === "empty", what.recalls === "query" ? (what.query ?? null) : null)
        .then((r) => !failed(r, setError) && setRecalls(r.data));
  }, []);

  const rows = memories ?? recalls;
  return (
    <section className="panel drill" id="drill" aria-live="polite" ref={panel}>
      <div className="drill-head">
        <h3>{heading}</h3>
        <button className="link" id="drill-close" onClick={onClose}>
          Close
        </button>
      </div>
      {error && <div className="error">{error}</div>}
      {rows === null && !error && <p className="muted">Loading…</p>}
      {rows !== null && rows.length === 0 && <p className="muted">Nothing here.</p>}
      {memories && memories.length > 0 && (
        <>
          <p className="muted">{count(memories.length, "memory", "memories")}{memories.length >= 200 ? " (the first 200)" : ""}:</p>
          <ul className="drilled" id="drilled">
            {memories.map((d) => (
              <li key={d.memory.id + (d.at ?? "")}>
                <span className="kind">{kindWord(d.memory)}</span>
                <button className="link" onClick={() => onOpenMemory(d.memory.id)}>
                  {title(d.memory)}
                </button>
                {d.note && <span className="muted"> — {d.note}</span>}
              </li>
            ))}
          </ul>
        </>
      )}
      {recalls && recalls.length > 0 && (
        <ul className="drilled" id="drilled">
          {recalls.map((r, i) => (
            <li key={i}>
              <span className="muted">{when(r.at)}</span> <strong>{r.query}</strong>{" "}
              <span className="muted">
                {r.purpose === "prompt" ? "for a prompt" : "a search"} · {count(r.hits.length, "result", "results")} ·{" "}
                {Math.round(r.latency_ms ?? 0)} ms
              </span>
              {r.hits.length > 0 && (
                <ol className="hits">
                  {r.hits.slice(0, 5).map((h) => (
                    <li key={h.memory.id}>
                      <button className="link" onClick={() => onOpenMemory(h.memory.id)}>
                        {title(h.memory)}
                      </button>
                      <span className="muted">
                        {" "}
                        {(h.score ?? 0).toFixed(3)}
                        {h.parts && <span className="parts"> ({partsWords(h.parts)})</span>}
                        {h.in_prompt ? " · in the prompt" : ""}
                        {h.used === true ? " · the answer drew on it" : ""}
                      </span>
                    </li>
                  ))}
                </ol>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

// What made a score, in words: the match, then what was added ("match 0.62, meaning 0.71,
// recent +0.05").
export function partsWords(p: ScoreParts): string {
  const out = [`match ${(p.matched ?? 0).toFixed(2)}`];
  if (p.similarity !== null) out.push(`meaning ${p.similarity.toFixed(2)}`);
  const added: [string, number | null][] = [
    ["the time asked about", p.time],
    ["recent", p.recency],
    ["often used", p.frequency],
    ["important", p.importance],
    ["tier", p.tier],
  ];
  for (const [word, x] of added) if (x !== null && Math.abs(x) >= 0.005) out.push(`${word} ${x > 0 ? "+" : "−"}${Math.abs(x).toFixed(2)}`);
  return out.join(", ");
}
