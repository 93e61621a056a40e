import { useState } from "react";
import { useLoaded, failed } from "./loaded";
import {
  commands,
  type CandidateEventView,
  type CandidateView_Serialize as CandidateView,
  type Verdict,
} from "./bindings";
import { describe } from "./errors";
import {
  KIND_WORDS,
  count,
  pct,
  title,
  when,
} from "./format";
import { JobBar, useJob } from "./jobs";

const STATUS_WORDS: Record<string, string> = { flagged: "Waiting", approved: "Approved", rejected: "Rejected" };

// The queue: find candidates, filter and sort them, approve or reject each or many.
export function Candidates({ active, onOpenMemory, onTrain }: { active: boolean; onOpenMemory: (id: string) => void; onTrain: () => void }) {
  const [status, setStatus] = useState("flagged");
  const [kind, setKind] = useState("");
  const [tag, setTag] = useState("");
  const [concept, setConcept] = useState("");
  const [sort, setSort] = useState("score");
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [note, setNote] = useState("");
  const [said, setSaid] = useState<string | null>(null);
  // After a search: of what was not listed, how many fall short of each criterion.
  const [short, setShort] = useState<string[] | null>(null);
  const [history, setHistory] = useState<{ id: string; events: CandidateEventView[] } | null>(null);
  const job = useJob();

  const query = { status: status || null, kind: kind || null, tag: tag || null, concept: concept || null, sort };
  const {
    data: view,
    error,
    setError,
    reload: load,
  } = useLoaded(active, () => commands.trainingCandidates(query), [status, kind, tag, concept, sort]);

  const find = async () => {
    setError(null);
    setSaid(null);
    const r = await job.run("Looking for memories worth teaching", (id, ch) => commands.flagCandidates(id, ch));
    if (failed(r, setError)) return;
    const f = r.data;
    setShort(f.short_of);
    setSaid(
      `Looked at ${count(f.considered, "fact or procedure", "facts and procedures")}: ${f.qualifying} ${
        f.qualifying === 1 ? "is" : "are"
      } worth teaching — ${f.flagged} new, ${f.kept} already listed${f.reopened ? `, ${f.reopened} back after a change` : ""}${
        f.withdrawn ? `; ${count(f.withdrawn, "memory no longer qualifies", "memories no longer qualify")} and left the list` : ""
      }.`,
    );
    load();
  };

  const decide = async (ids: string[], verdict: Verdict) => {
    setError(null);
    const r = await commands.decideCandidates(ids, verdict, note.trim() || null);
    if (failed(r, setError)) return;
    const verb = verdict === "approve" ? "Approved" : verdict === "reject" ? "Rejected" : "Back in the list";
    setSaid(`${verb}: ${r.data.map((c) => title(c.memory)).join(", ")}.`);
    setChosen(new Set());
    setNote("");
    load();
  };

  const showHistory = async (id: string) => {
    if (history?.id === id) return setHistory(null);
    const r = await commands.candidateHistory(id);
    if (r.status === "ok") setHistory({ id, events: r.data });
    else setError(describe(r.error));
  };

  const toggle = (id: string) => {
    const next = new Set(chosen);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setChosen(next);
  };

  const total = view ? view.flagged + view.approved + view.rejected : 0;
  return (
    <section className="panel" id="candidates">
      <p className="muted">
        A memory is worth teaching when it is a fact or a procedure you keep long-term, matters to you, is recalled often, has
        not changed for a while and nothing contradicts it (Settings → Training says exactly how much is enough).
      </p>
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
      {short && short.length > 0 && (
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
      )}
      {error && <div className="error">{error}</div>}
      {view && (
        <>
          <div className="filters" id="candidate-filters">
            <select id="candidate-status" value={status} onChange={(e) => setStatus(e.target.value)} aria-label="Which">
              <option value="flagged">Waiting for you ({view.flagged})</option>
              <option value="approved">Approved ({view.approved})</option>
              <option value="rejected">Rejected ({view.rejected})</option>
              <option value="">All ({total})</option>
            </select>
            <select id="candidate-kind" value={kind} onChange={(e) => setKind(e.target.value)} aria-label="Type">
              <option value="">Facts and procedures</option>
              <option value="semantic">Facts</option>
              <option value="procedural">Procedures</option>
            </select>
            <select id="candidate-tag" value={tag} onChange={(e) => setTag(e.target.value)} aria-label="Tag">
              <option value="">Any tag</option>
              {view.tags.map((t) => (
                <option key={t} value={t}>
                  Tagged {t}
                </option>
              ))}
            </select>
            <select id="candidate-concept" value={concept} onChange={(e) => setConcept(e.target.value)} aria-label="Concept">
              <option value="">Any concept</option>
              {view.concept_names.map((c) => (
                <option key={c} value={c}>
                  In “{c}”
                </option>
              ))}
            </select>
            <select id="candidate-sort" value={sort} onChange={(e) => setSort(e.target.value)} aria-label="Order">
              <option value="score">Most worth teaching first</option>
              <option value="lowest">Least sure first</option>
              <option value="recent">Found most recently first</option>
            </select>
          </div>
          {view.changed > 0 && (
            <p className="notice" id="candidates-changed">
              {count(view.changed, "memory has", "memories have")} changed since {view.changed === 1 ? "it was" : "they were"} found
              and {view.changed === 1 ? "is" : "are"} left out until you look for memories worth teaching again.
            </p>
          )}
          {total === 0 ? (
            short === null ? (
              <p className="muted" id="candidates-empty">
                Nothing is listed yet. Press “Find memories worth teaching”: memories qualify once they have been long-term,
                recalled and unchanged for a while.
              </p>
            ) : null
          ) : view.candidates.length === 0 ? (
            <p className="muted" id="candidates-empty">
              None here with these filters.
            </p>
          ) : (
            <>
              <div className="selection" id="candidate-bulk">
                <span>{chosen.size ? `${chosen.size} chosen` : "Choose several to decide at once, or decide one by one."}</span>
                <input
                  id="candidate-note"
                  value={note}
                  onChange={(e) => setNote(e.target.value)}
                  placeholder="Why (optional, kept with your decision)"
                  maxLength={500}
                />
                <button id="approve-chosen" disabled={!chosen.size} onClick={() => decide([...chosen], "approve")}>
                  Approve chosen
                </button>
                <button id="reject-chosen" disabled={!chosen.size} onClick={() => decide([...chosen], "reject")}>
                  Reject chosen
                </button>
              </div>
              <ul className="candidate-list" id="candidate-list">
                {view.candidates.map((c) => (
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
                ))}
              </ul>
            </>
          )}
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
