import { useEffect, useState } from "react";
import {
  commands,
  type DecisionView_Serialize as DecisionView,
  type DocumentView_Serialize as DocumentView,
} from "./bindings";
import { answered, failed } from "./loaded";
import { count } from "./format";

// The facts Strata found in conversations: those waiting for the person's review (accept as
// they are or reworded, or reject; one by one or all at once), and what is known about each
// person or thing, with the values a fact had before.
export function Facts({ active }: { active: boolean }) {
  const [proposals, setProposals] = useState<DecisionView[] | null>(null);
  const [documents, setDocuments] = useState<DocumentView[]>([]);
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const refresh = () =>
    Promise.all([answered(commands.proposedFacts(), setProposals, setError), answered(commands.knownFacts(), setDocuments, setError)]);

  useEffect(() => {
    if (active) refresh();
  }, [active]);

  const edited = (p: DecisionView) => {
    const text = edits[p.id];
    return text !== undefined && text.trim() !== p.fact ? text.trim() : null;
  };

  const accept = async (items: DecisionView[]) => {
    const res = await commands.acceptFacts(items.map((p) => ({ id: p.id, fact: edited(p) })));
    if (failed(res, setError)) return;
    setError(null);
    setNotice(`Remembered ${count(res.data.length, "fact", "facts")}: ${res.data.map((d) => d.fact).join("; ")}.`);
    refresh();
  };

  const reject = async (items: DecisionView[]) => {
    const res = await commands.rejectFacts(items.map((p) => p.id));
    if (failed(res, setError)) return;
    setError(null);
    setNotice(`Left out ${count(res.data.length, "fact", "facts")}: Strata will not use ${res.data.length === 1 ? "it" : "them"}.`);
    refresh();
  };

  if (proposals === null) return <div className="empty">{error ?? "Loading…"}</div>;
  return (
    <div className="facts">
      <h2>Facts from your conversations</h2>
      <p className="muted intro">
        Strata reads your conversations for facts worth keeping — about you and the people and things in your life — and keeps
        them up to date: when something changes, the old value stays in the fact's history. Facts waiting for your review are
        not used until you accept them.
      </p>
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
      {notice && (
        <div className="notice" id="facts-notice" role="status">
          {notice}
        </div>
      )}
      <section id="proposals">
        <div className="section-head">
          <h3>Waiting for your review ({proposals.length.toLocaleString()})</h3>
          {proposals.length > 1 && (
            <span className="bulk">
              <button id="accept-all" onClick={() => accept(proposals)}>
                Accept all
              </button>
              <button id="reject-all" onClick={() => reject(proposals)}>
                Reject all
              </button>
            </span>
          )}
        </div>
        {proposals.length === 0 && <div className="empty">Nothing is waiting for your review.</div>}
        <ul className="proposals">
          {proposals.map((p) => (
            <Proposal
              key={p.id}
              p={p}
              text={edits[p.id] ?? p.fact}
              edited={!!edited(p)}
              onEdit={(text) => setEdits((e) => ({ ...e, [p.id]: text }))}
              onAccept={() => accept([p])}
              onReject={() => reject([p])}
            />
          ))}
        </ul>
      </section>
      <Known documents={documents} />
    </div>
  );
}

type ProposalProps = {
  p: DecisionView;
  text: string;
  edited: boolean;
  onEdit: (text: string) => void;
  onAccept: () => void;
  onReject: () => void;
};

// A fact waiting for review: what it changes, the fact (editable), why, and the decision.
function Proposal({ p, text, edited, onEdit, onAccept, onReject }: ProposalProps) {
  return (
    <li className="proposal" data-id={p.id}>
      <div className="change">{changeWords(p)}</div>
      <input
        className="fact-text"
        aria-label={`The fact about ${p.subject_name}`}
        value={text}
        onChange={(ev) => onEdit(ev.target.value)}
      />
      <div className="muted">
        Why: {p.reason}
        {p.stated ? ` · said on ${p.stated}` : ""}
      </div>
      <div className="actions">
        <button className="accept" onClick={onAccept}>
          {edited ? "Accept as edited" : "Accept"}
        </button>
        <button className="reject" onClick={onReject}>
          Reject
        </button>
      </div>
    </li>
  );
}

// What Strata knows: each person or thing with its facts and what they were before.
function Known({ documents }: { documents: DocumentView[] }) {
  return (
    <section id="known">
      <h3>What Strata knows</h3>
      {documents.length === 0 && (
        <div className="empty">No facts yet. They come from your conversations in Chat, and from AI tools connected to Strata.</div>
      )}
      {documents.map((d) => (
        <div className="document" key={d.id}>
          <h4>{d.name}</h4>
          {d.description && <div className="muted">{d.description}</div>}
          <ul>
            {d.facts.map((f) => (
              <li key={f.id}>
                {f.fact}
                {f.stated && <span className="muted"> · said on {f.stated}</span>}
                {f.history.slice(0, -1).map((old, i) => (
                  <div className="before muted" key={i}>
                    Before: {old.fact}
                    {old.valid_until ? ` (until ${old.valid_until})` : ""}
                  </div>
                ))}
              </li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}

// What a proposal would do, in words.
function changeWords(p: DecisionView): string {
  if (p.action === "update") return `${p.subject_name}: changes what was known${p.previous ? ` — “${p.previous}”` : ""}`;
  if (p.action === "noop") return `${p.subject_name}: said again`;
  return `${p.subject_name}: new fact`;
}
