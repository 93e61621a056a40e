import { useState, type ReactNode } from "react";
import { answered, useLoaded, failed } from "./loaded";
import {
  commands,
  type CandidateEventView,
  type CandidateView_Serialize as CandidateView,
  type CandidatesView_Serialize as CandidatesView,
  type FlagReport,
  type Verdict,
} from "./bindings";
import {
  KIND_WORDS,
  count,
  pct,
  title,
  when,
} from "./format";
import { JobBar, useJob } from "./jobs";

// Which candidates are listed, and in what order ("" for any).
type Query = { status: string; kind: string; tag: string; concept: string; sort: string };

const WORTH_TEACHING =
  "A memory is worth teaching when it is a fact or a procedure you keep long-term, matters to you, is recalled often, has " +
  "not changed for a while and nothing contradicts it (Settings → Training says exactly how much is enough).";

const STATUS_WORDS: Record<string, string> = { flagged: "Waiting", approved: "Approved", rejected: "Rejected" };

// What a search for candidates found, in words.
function foundWords(f: FlagReport): string {
  return `Looked at ${count(f.considered, "fact or procedure", "facts and procedures")}: ${f.qualifying} ${
    f.qualifying === 1 ? "is" : "are"
  } worth teaching — ${f.flagged} new, ${f.kept} already listed${f.reopened ? `, ${f.reopened} back after a change` : ""}${
    f.withdrawn ? `; ${count(f.withdrawn, "memory no longer qualifies", "memories no longer qualify")} and left the list` : ""
  }.`;
}

// Candidates that changed since they were found, in words.
function changedWords(n: number): string {
  return `${count(n, "memory has", "memories have")} changed since ${n === 1 ? "it was" : "they were"} found and ${
    n === 1 ? "is" : "are"
  } left out until you look for memories worth teaching again.`;
}

// The queue: find candidates, filter and sort them, approve or reject each or many.
export function Candidates({ active, onOpenMemory, onTrain }: { active: boolean; onOpenMemory: (id: string) => void; onTrain: () => void }) {
  const [q, setQ] = useState<Query>({ status: "flagged", kind: "", tag: "", concept: "", sort: "score" });
  const set = (field: keyof Query) => (value: string) => setQ((old) => ({ ...old, [field]: value }));
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [note, setNote] = useState("");
  const [said, setSaid] = useState<string | null>(null);
  // After a search: of what was not listed, how many fall short of each criterion.
  const [short, setShort] = useState<string[] | null>(null);
  const [history, setHistory] = useState<{ id: string; events: CandidateEventView[] } | null>(null);
  const job = useJob();

  const query = { status: q.status || null, kind: q.kind || null, tag: q.tag || null, concept: q.concept || null, sort: q.sort };
  const { data: view, error, setError, reload: load } = useLoaded(active, () => commands.trainingCandidates(query), [q]);

  const find = async () => {
    setError(null);
    setSaid(null);
    const r = await job.run("Looking for memories worth teaching", (id, ch) => commands.flagCandidates(id, ch));
    if (failed(r, setError)) return;
    await load();
    setShort(r.data.short_of);
    setSaid(foundWords(r.data));
  };

  const decide = async (ids: string[], verdict: Verdict) => {
    setError(null);
    const r = await commands.decideCandidates(ids, verdict, note.trim() || null);
    if (failed(r, setError)) return;
    const verb = verdict === "approve" ? "Approved" : verdict === "reject" ? "Rejected" : "Back in the list";
    setChosen(new Set());
    setNote("");
    // Said with the list as it now is: nothing decided is left to be chosen again.
    await load();
    setSaid(`${verb}: ${r.data.map((c) => title(c.memory)).join(", ")}.`);
  };

  const showHistory = async (id: string) => {
    if (history?.id === id) return setHistory(null);
    await answered(commands.candidateHistory(id), (events) => setHistory({ id, events }), setError);
  };

  const toggle = (id: string) => {
    const next = new Set(chosen);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setChosen(next);
  };

  return (
    <section className="panel" id="candidates">
      <p className="muted">{WORTH_TEACHING}</p>
      <div className="actions-row">
        <button id="find-candidates" className="primary" disabled={job.running} onClick={find}>
          Find memories worth teaching
        </button>
        {view && view.approved > 0 && (
          <button id="go-train" onClick={onTrain}>
            Teach the {count(view.approved, "approved memory", "approved memories")} →
          </button>
        )}
      </div>
      <JobBar job={job} />
      {said && (
        <p className="notice" id="candidates-said" role="status">
          {said}
        </p>
      )}
      {short && short.length > 0 && <ShortOf short={short} />}
      {error && <div className="error">{error}</div>}
      {view && (
        <>
          <CandidateFilters view={view} q={q} set={set} />
          {view.changed > 0 && (
            <p className="notice" id="candidates-changed">
              {changedWords(view.changed)}
            </p>
          )}
          <CandidateList
            view={view}
            searched={short !== null}
            bulk={<BulkBar chosen={chosen.size} note={note} setNote={setNote} onDecide={(v) => decide([...chosen], v)} />}
            row={(c) => (
              <CandidateRow
                key={c.memory.id}
                c={c}
                chosen={chosen.has(c.memory.id)}
                onToggle={() => toggle(c.memory.id)}
                onDecide={(v) => decide([c.memory.id], v)}
                onOpen={() => onOpenMemory(c.memory.id)}
                onHistory={() => showHistory(c.memory.id)}
                history={history?.id === c.memory.id ? history.events : null}
              />
            )}
          />
        </>
      )}
    </section>
  );
}

function CandidateRow({
  c,
  chosen,
  onToggle,
  onDecide,
  onOpen,
  onHistory,
  history,
}: {
  c: CandidateView;
  chosen: boolean;
  onToggle: () => void;
  onDecide: (v: Verdict) => void;
  onOpen: () => void;
  onHistory: () => void;
  history: CandidateEventView[] | null;
}) {
  const decided = c.decided_by ? ` by ${c.decided_by === "desktop" ? "you" : c.decided_by}${c.decided_at ? `, ${when(c.decided_at)}` : ""}` : "";
  return (
    <li className="candidate" data-id={c.memory.id}>
      <div className="candidate-head">
        <input type="checkbox" checked={chosen} onChange={onToggle} aria-label={`Choose ${title(c.memory)}`} />
        <button className="link candidate-title" onClick={onOpen} title="Open in Memories">
          {title(c.memory)}
        </button>
        <span className="chip">{KIND_WORDS[c.memory.type] ?? c.memory.type}</span>
        <span className="candidate-score" title="How worth teaching, from importance, use, how long it has not changed and whether it belongs to a concept">
          {pct(c.score)}
        </span>
      </div>
      <ul className="reasons">
        {c.reasons.map((r) => (
          <li key={r}>{r}</li>
        ))}
      </ul>
      <div className="candidate-foot">
        <span className="candidate-status">
          {STATUS_WORDS[c.status] ?? c.status}
          {decided}
          {c.note ? ` — “${c.note}”` : ""}
        </span>
        {c.status !== "approved" && (
          <button className="approve" onClick={() => onDecide("approve")}>
            Approve
          </button>
        )}
        {c.status !== "rejected" && (
          <button className="reject" onClick={() => onDecide("reject")}>
            Reject
          </button>
        )}
        {c.status !== "flagged" && (
          <button className="reopen" onClick={() => onDecide("reopen")}>
            Undo decision
          </button>
        )}
        <button className="link muted history-toggle" onClick={onHistory}>
          {history ? "Hide what happened" : "What happened"}
        </button>
      </div>
      {history && (
        <ol className="timeline candidate-history">
          {history.map((e, i) => (
            <li key={i}>
              {when(e.at)}: {EVENT_WORDS[e.kind] ?? e.kind}
              {e.by !== "flagging" && e.by ? ` by ${e.by === "desktop" ? "you" : e.by}` : ""}
              {e.detail ? ` — ${e.detail}` : ""}
            </li>
          ))}
        </ol>
      )}
    </li>
  );
}

const EVENT_WORDS: Record<string, string> = {
  flagged: "found worth teaching",
  approved: "approved",
  rejected: "rejected",
  reopened: "back in the list",
  withdrawn: "left the list",
};

// Which candidates to list: waiting, approved or rejected; of which type, tag or concept; in
// what order.
function CandidateFilters({ view, q, set }: { view: CandidatesView; q: Query; set: (field: keyof Query) => (value: string) => void }) {
  return (
    <div className="filters" id="candidate-filters">
      <select id="candidate-status" value={q.status} onChange={(e) => set("status")(e.target.value)} aria-label="Which">
        <option value="flagged">Waiting for you ({view.flagged})</option>
        <option value="approved">Approved ({view.approved})</option>
        <option value="rejected">Rejected ({view.rejected})</option>
        <option value="">All ({view.flagged + view.approved + view.rejected})</option>
      </select>
      <select id="candidate-kind" value={q.kind} onChange={(e) => set("kind")(e.target.value)} aria-label="Type">
        <option value="">Facts and procedures</option>
        <option value="semantic">Facts</option>
        <option value="procedural">Procedures</option>
      </select>
      <select id="candidate-tag" value={q.tag} onChange={(e) => set("tag")(e.target.value)} aria-label="Tag">
        <option value="">Any tag</option>
        {view.tags.map((t) => (
          <option key={t} value={t}>
            Tagged {t}
          </option>
        ))}
      </select>
      <select id="candidate-concept" value={q.concept} onChange={(e) => set("concept")(e.target.value)} aria-label="Concept">
        <option value="">Any concept</option>
        {view.concept_names.map((c) => (
          <option key={c} value={c}>
            In “{c}”
          </option>
        ))}
      </select>
      <select id="candidate-sort" value={q.sort} onChange={(e) => set("sort")(e.target.value)} aria-label="Order">
        <option value="score">Most worth teaching first</option>
        <option value="lowest">Least sure first</option>
        <option value="recent">Found most recently first</option>
      </select>
    </div>
  );
}

// Of what a search did not list, how many fall short of each criterion, and what to do.
function ShortOf({ short }: { short: string[] }) {
  return (
    <div className="muted" id="candidates-short">
      <p>Why the rest do not qualify yet:</p>
      <ul>
        {short.map((s) => (
          <li key={s}>{s}.</li>
        ))}
      </ul>
      <p>
        Lower what is asked in Settings → “Training: what is worth teaching”, or open a fact on the Memories screen and choose
        “Teach this to the on-device model”.
      </p>
    </div>
  );
}

// Decide several at once, with a reason kept beside the decision.
function BulkBar(p: { chosen: number; note: string; setNote: (n: string) => void; onDecide: (v: Verdict) => void }) {
  return (
    <div className="selection" id="candidate-bulk">
      <span>{p.chosen ? `${p.chosen} chosen` : "Choose several to decide at once, or decide one by one."}</span>
      <input
        id="candidate-note"
        value={p.note}
        onChange={(e) => p.setNote(e.target.value)}
        placeholder="Why (optional, kept with your decision)"
        maxLength={500}
      />
      <button id="approve-chosen" disabled={!p.chosen} onClick={() => p.onDecide("approve")}>
        Approve chosen
      </button>
      <button id="reject-chosen" disabled={!p.chosen} onClick={() => p.onDecide("reject")}>
        Reject chosen
      </button>
    </div>
  );
}

// The candidates listed, with the bar to decide several at once; or why none are.
function CandidateList(p: { view: CandidatesView; searched: boolean; bulk: ReactNode; row: (c: CandidateView) => ReactNode }) {
  const total = p.view.flagged + p.view.approved + p.view.rejected;
  if (total === 0)
    return p.searched ? null : (
      <p className="muted" id="candidates-empty">
        Nothing is listed yet. Press “Find memories worth teaching”: memories qualify once they have been long-term, recalled
        and unchanged for a while.
      </p>
    );
  if (p.view.candidates.length === 0)
    return (
      <p className="muted" id="candidates-empty">
        None here with these filters.
      </p>
    );
  return (
    <>
      {p.bulk}
      <ul className="candidate-list" id="candidate-list">
        {p.view.candidates.map(p.row)}
      </ul>
    </>
  );
}
