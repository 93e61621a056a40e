import { useEffect, useState } from "react";
import {
  commands,
  type CompactReport,
  type ConceptView,
  type ExpandedConcept_Serialize as ExpandedConcept,
  type MemoryView_Serialize as MemoryView,
  type WriteReport,
} from "./bindings";
import { answered, failed } from "./loaded";
import { count, day, title } from "./format";
import { JobBar, useJob } from "./jobs";
import { remember, titleOf } from "./Models";

// The on-device models' names for people, to say which one wrote a summary.
function useModelTitles() {
  const [, setKnown] = useState(0);
  useEffect(() => {
    answered(commands.onDeviceModels(), (models) => {
      remember(models);
      setKnown((n) => n + 1);
    });
  }, []);
}

// A concept's time span in words: "8 May 2023", or "8 May 2023 to 19 Jun 2023".
function span(first: string, last: string): string {
  const [a, b] = [day(first), day(last)];
  return a === b ? a : `${a} to ${b}`;
}

// What a grouping pass did, in words.
function outcome(r: CompactReport): string {
  if (r.concepts === 0)
    return `No group found among ${count(r.memories, "memory", "memories")}: concepts need at least three memories that say related things.`;
  const changes = [
    r.formed && `${r.formed} new`,
    r.updated && `${r.updated} changed`,
    r.unchanged && `${r.unchanged} as before`,
    r.merged && `${r.merged} merged into others`,
    r.dissolved && `${r.dissolved} no longer a group`,
  ].filter(Boolean);
  return (
    `${count(r.concepts, "concept", "concepts")} now group ${r.grouped.toLocaleString()} of ${count(r.memories, "memory", "memories")}` +
    ` (${changes.join(", ")}). Their summaries are ${(r.ratio ?? 0).toFixed(1)}× shorter than what they stand for.`
  );
}

// What a writing pass did, in words.
function written(r: WriteReport): string {
  const parts = [
    `${titleOf(r.model)} wrote ${count(r.written, "summary", "summaries")}`,
    r.sentences_dropped > 0 &&
      `${count(r.sentences_dropped, "sentence was", "sentences were")} left out: a name, number or date none of its memories holds`,
    r.kept_extractive > 0 &&
      `${count(r.kept_extractive, "concept keeps", "concepts keep")} what its memories said, because nothing the model wrote held up`,
    r.already > 0 && `${count(r.already, "summary", "summaries")} it wrote before ${r.already === 1 ? "is" : "are"} unchanged`,
    r.changed_meanwhile > 0 &&
      `${count(r.changed_meanwhile, "concept was", "concepts were")} grouped again meanwhile: write again to do ${
        r.changed_meanwhile === 1 ? "it" : "them"
      }`,
  ].filter(Boolean);
  return parts.join("; ") + ".";
}

// The concepts: related memories Strata grouped, named and summarized, the largest first, and
// a way to group again.
export function ConceptsPanel({
  onOpen,
  onClose,
  onGrouped,
}: {
  onOpen: (id: string) => void;
  onClose: () => void;
  onGrouped: () => void;
}) {
  const [concepts, setConcepts] = useState<ConceptView[] | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const job = useJob();
  useModelTitles();
  const load = () =>
    answered(commands.concepts(), setConcepts, setError);
  useEffect(() => {
    load();
  }, []);

  const group = async () => {
    setSaid(null);
    setError(null);
    const res = await job.run("Grouping related memories", (id, ch) => commands.compact(id, true, ch));
    if (failed(res, setError)) return;
    await load();
    setSaid(outcome(res.data));
    onGrouped();
  };

  const write = async () => {
    setSaid(null);
    setError(null);
    const res = await job.run("Writing summaries", (id, ch) => commands.writeSummaries(id, ch));
    if (failed(res, setError)) return;
    await load();
    setSaid(written(res.data));
    onGrouped();
  };

  return (
    <div id="concepts" className="concepts">
      <h2>Concepts</h2>
      <p className="muted">
        A concept is a group of memories about one thing — a pet, a trip, a project — with a name and a short summary: quoted
        from them, or written by the on-device model when you ask it to. Strata can give a model the summary instead of every memory, to fit more into its prompt. Nothing is
        changed or erased: each memory stays as it is.
      </p>
      <div className="actions">
        <button id="group" onClick={group} disabled={job.running}>
          {concepts && concepts.length > 0 ? "Group again" : "Group related memories"}
        </button>
        {concepts && concepts.length > 0 && (
          <button
            id="write-summaries"
            onClick={write}
            disabled={job.running}
            title="The on-device model rewrites each summary in its own words; a sentence with a name, number or date its memories do not hold is left out"
          >
            Write summaries
          </button>
        )}
        <button onClick={onClose}>Close</button>
      </div>
      <JobBar job={job} unit={job.label === "Writing summaries" ? "concepts" : undefined} />
      {said && (
        <div className="notice" id="grouped" role="status">
          {said}
        </div>
      )}
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
      {concepts && concepts.length === 0 && !said && (
        <p id="no-concepts">
          No concepts yet. “Group related memories” finds them: seconds for a few thousand memories, about two minutes for 100,000.
        </p>
      )}
      {concepts && concepts.length > 0 && (
        <ul className="concept-list" id="concept-list">
          {concepts.map((c) => (
            <li key={c.id}>
              <button className="link" onClick={() => onOpen(c.id)} title="Open this concept">
                {c.name}
              </button>{" "}
              <span className="muted">
                {count(c.members.length, "memory", "memories")} · {span(c.first, c.last)}
              </span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

// A concept in full: what it is about, its summary (each sentence opens the memory that said
// it) and its members.
export function ConceptFields({ memory, onOpen }: { memory: MemoryView; onOpen: (id: string) => void }) {
  const [c, setC] = useState<ExpandedConcept | null>(null);
  const [error, setError] = useState<string | null>(null);
  useModelTitles();
  useEffect(() => {
    answered(commands.concept(memory.id), setC, setError);
  }, [memory.id, memory.version]);
  if (error)
    return (
      <div className="error" role="alert">
        {error}
      </div>
    );
  if (!c) return null;
  const { concept } = c;
  return (
    <div className="concept" id="concept">
      <p id="concept-about">
        Groups {count(c.total, "memory", "memories")} from {span(concept.first, concept.last)}, about {concept.terms.slice(0, 6).join(", ")}.
      </p>
      <h3>Summary</h3>
      <p className="muted" id="summary-source">
        {concept.written_by
          ? `Written by ${titleOf(concept.written_by)} from these memories. Every name, number and date in a sentence is in a memory it cites: click it to open that memory.`
          : "Each sentence is quoted from one of its memories: click it to open that memory."}
      </p>
      <ul id="concept-summary">
        {concept.summary.map((s, i) => (
          <li key={i}>
            <button className="link" onClick={() => onOpen(s.from)} title="Open the memory that said it">
              {s.text}
            </button>
          </li>
        ))}
      </ul>
      <h3>Its memories</h3>
      <ul id="concept-members">
        {c.members.map((m) => (
          <li key={m.id}>
            <button className="link" onClick={() => onOpen(m.id)} title="Open this memory">
              {title(m)}
            </button>
          </li>
        ))}
      </ul>
      {c.total > c.members.length && <p className="muted">and {c.total - c.members.length} more.</p>}
    </div>
  );
}
