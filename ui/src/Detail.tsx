import { useEffect, useState } from "react";
import {
  commands,
  type EventView_Serialize as EventView,
  type MemoryView_Serialize as MemoryView,
  type RecallView_Serialize as RecallView,
} from "./bindings";
import { answered, failed } from "./loaded";
import { ForgetDialog, forgotten } from "./Forget";
import { ConceptFields } from "./Concepts";
import { TIER_WORDS, byWhom, importanceWords, isConcept, kindWord, origin, title, valueText, when, words } from "./format";

type Why = RecallView["why"];

// One memory in full: its fields as its type lays them out, tier, pin, tags, why the last
// search recalled it, and its history — any event of which shows the memory as it was then.
export function Detail({
  memory,
  why,
  onChanged,
  onEdit,
  onOpen,
  onForgotten,
}: {
  memory: MemoryView;
  why: Why | null;
  onChanged: (m: MemoryView) => void;
  onEdit: () => void;
  onOpen: (id: string) => void;
  onForgotten: (what: string) => void;
}) {
  const [history, setHistory] = useState<EventView[]>([]);
  const [asOf, setAsOf] = useState<AsOf | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [taught, setTaught] = useState<string | null>(null);
  useEffect(() => setTaught(null), [memory.id]);

  useEffect(() => {
    setAsOf(null);
    answered(commands.history(memory.id), setHistory, setError);
  }, [memory.id, memory.version]);

  const act = async (p: ReturnType<typeof commands.pin>) => {
    const res = await p;
    if (failed(res, setError)) return;
    setError(null);
    onChanged(res.data);
  };

  const showAsOf = async (event: EventView) => {
    const res = await commands.compare(memory.id, event.seq);
    if (!failed(res, setError)) setAsOf({ event, memory: res.data.then, changes: res.data.changes });
  };

  const restore = async () => {
    if (!asOf) return;
    const res = await commands.restore(memory.id, asOf.event.seq);
    if (failed(res, setError)) return;
    setError(null);
    setAsOf(null);
    onChanged(res.data);
  };

  const [confirming, setConfirming] = useState(false);
  const forget = async () => {
    setConfirming(false);
    const res = await commands.forget(memory.id);
    if (!failed(res, setError)) onForgotten(forgotten(title(memory), res.data));
  };

  const m = asOf?.memory ?? memory;
  const past = asOf !== null;
  const teach = async () => {
    const r = await commands.approveByHand(m.id);
    if (!failed(r, setError)) setTaught("Approved for teaching: it is on the Training screen, ready for “Teach and check”.");
  };
  return (
    <div id="detail" className={past ? "past" : ""}>
      {asOf && <AsOfBanner asOf={asOf} onNow={() => setAsOf(null)} onRestore={restore} />}
      {!past && m.expired_at && <Expired at={m.expired_at} onRevive={() => act(commands.revive(m.id))} />}
      <h2>{title(m)}</h2>
      <About m={m} past={past} act={act} />
      {isConcept(m) && !past ? <ConceptFields memory={m} onOpen={onOpen} /> : <Fields memory={m} />}
      {why && !past && <WhyTable why={why} />}
      <Timeline history={history} current={asOf?.event.seq} onShow={showAsOf} />
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
      {!past && (
        <>
          {!isConcept(m) && (
            <button id="edit" className="edit" onClick={onEdit} title="Edit (E)">
              Edit
            </button>
          )}
          {!isConcept(m) && m.type !== "episodic" && !m.expired_at && (
            <button id="teach" onClick={teach}>
              Teach this to the on-device model
            </button>
          )}
          <button className="danger" id="forget" onClick={() => setConfirming(true)} title="Forget (Delete)">
            Forget…
          </button>
          {taught && (
            <p className="notice" id="taught" role="status">
              {taught}
            </p>
          )}
        </>
      )}
      {confirming && <ForgetDialog name={title(memory)} onForget={forget} onKeep={() => setConfirming(false)} />}
    </div>
  );
}

type AsOf = { event: EventView; memory: MemoryView; changes: string[] };

// An expired memory: kept, no longer recalled, and a way back.
function Expired({ at, onRevive }: { at: string; onRevive: () => void }) {
  return (
    <div className="as-of" id="put-away">
      Expired on {when(at)}: Strata no longer recalls it or gives it to a model, but keeps it. Its history says why.{" "}
      <button id="revive" onClick={onRevive}>
        Bring it back
      </button>
    </div>
  );
}

// The memory as it was after an event of its history: what changed since, back to now, restore.
function AsOfBanner({ asOf, onNow, onRestore }: { asOf: AsOf; onNow: () => void; onRestore: () => void }) {
  return (
    <div className="as-of" id="as-of">
      As it was after “{asOf.event.summary}” ({when(asOf.event.at)}), version {asOf.memory.version}.{" "}
      {asOf.changes.length === 0 ? (
        <p id="as-of-changes">It reads the same now.</p>
      ) : (
        <>
          <p>Since then:</p>
          <ul id="as-of-changes">
            {asOf.changes.map((c, i) => (
              <li key={i}>{c}</li>
            ))}
          </ul>
        </>
      )}
      <button id="as-of-now" onClick={onNow}>
        Back to now
      </button>
      {asOf.changes.length > 0 && (
        <button id="restore" onClick={onRestore} title="Its tier and pin stay as they are">
          Restore this version
        </button>
      )}
    </div>
  );
}

// Type, tier and pin (changeable unless seen as it was), tags, importance, origin and who sees it.
function About({
  m,
  past,
  act,
}: {
  m: MemoryView;
  past: boolean;
  act: (p: ReturnType<typeof commands.pin>) => void;
}) {
  return (
    <dl>
      <dt>Type</dt>
      <dd>{kindWord(m)}</dd>
      <dt>Tier</dt>
      <dd>
        {past ? (
          TIER_WORDS[m.tier]
        ) : (
          <select id="tier" value={m.tier} onChange={(e) => act(commands.moveTier(m.id, e.target.value))}>
            <option value="short">Short-term (this conversation’s working memory)</option>
            <option value="medium">Medium-term (recent, fades if unused)</option>
            <option value="long">Long-term (kept)</option>
          </select>
        )}
      </dd>
      <dt>Pinned</dt>
      <dd>
        <label>
          <input id="pinned" type="checkbox" checked={m.pinned} disabled={past} onChange={(e) => act(commands.pin(m.id, e.target.checked))} />{" "}
          never moved down by maintenance
        </label>
      </dd>
      <dt>Tags</dt>
      <dd id="tags">{m.tags.join(", ") || "none"}</dd>
      <dt>Importance</dt>
      <dd id="importance">{importanceWords(m.importance)}</dd>
      <dt>Created</dt>
      <dd>{when(m.created_at)}</dd>
      <dt>From</dt>
      <dd id="from">{origin(m.source)}</dd>
      {(m.scope.agent_id || m.scope.session_id) && (
        <>
          <dt>Who sees it</dt>
          <dd>
            {m.scope.agent_id ? `only the AI tool “${m.scope.agent_id}”` : "every AI tool you connect"}
            {m.scope.session_id ? " · said in one conversation" : ""}
          </dd>
        </>
      )}
    </dl>
  );
}

// The memory's events, each a button that shows the memory as it was after it.
function Timeline({
  history,
  current,
  onShow,
}: {
  history: EventView[];
  current: number | null | undefined;
  onShow: (e: EventView) => void;
}) {
  return (
    <>
      <h3>History</h3>
      <p className="muted">Click an event to see the memory as it was then.</p>
      <ol className="timeline">
        {history.map((e) => (
          <li key={e.seq} className={current === e.seq ? "current" : ""}>
            <button className="link" onClick={() => onShow(e)} title="Show the memory as of this event">
              <time>{when(e.at)}</time> {e.summary}
            </button>{" "}
            <span className="who">{byWhom(e)}</span>
          </li>
        ))}
      </ol>
    </>
  );
}

// The content, laid out for its type.
function Fields({ memory: m }: { memory: MemoryView }) {
  if (m.type === "semantic")
    return (
      <table className="facts">
        <tbody>
          {Object.entries(m.facts).map(([k, v]) => (
            <tr key={k}>
              <th>{words(k)}</th>
              <td>{valueText(v)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    );
  if (m.type === "procedural")
    return (
      <>
        <ol id="steps">
          {m.steps.map((s, i) => (
            <li key={i}>{s}</li>
          ))}
        </ol>
        {m.context && (
          <p id="applies">
            <span className="muted">When it applies:</span> {m.context}
          </p>
        )}
      </>
    );
  return (
    <table className="facts">
      <tbody>
        <tr>
          <th>When</th>
          <td>{when(m.occurred_at)}</td>
        </tr>
        {m.body.form === "utterance" ? (
          <>
            <tr>
              <th>Speaker</th>
              <td>{m.body.speaker}</td>
            </tr>
            <tr>
              <th>Said</th>
              <td>{m.body.text}</td>
            </tr>
          </>
        ) : (
          <>
            <tr>
              <th>Asked</th>
              <td>{m.body.query}</td>
            </tr>
            <tr>
              <th>Answered</th>
              <td>{m.body.response}</td>
            </tr>
          </>
        )}
      </tbody>
    </table>
  );
}

// Why the last search recalled it: the parts of its score.
function WhyTable({ why }: { why: Why }) {
  const reasons = [
    why.keyword_rank != null && "it has words you searched for",
    (why.similarity ?? 0) >= 0.5 && "it is close in meaning",
    why.time_phrase && `it happened ${why.time_phrase}`,
    why.said_by_assistant && "it counts half, as part of it is what an assistant said",
  ].filter(Boolean);
  return (
    <details className="why">
      <summary>
        <strong>Why it was found:</strong> {reasons.length ? reasons.join("; ") : "it resembles what you searched for"}.
      </summary>
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
              recency +{(why.recency ?? 0).toFixed(3)} · use +{(why.frequency ?? 0).toFixed(3)} · importance +{(why.importance ?? 0).toFixed(3)} · tier +
              {(why.tier ?? 0).toFixed(3)}
            </td>
          </tr>
          {why.said_by_assistant && (
            <tr>
              <th>An assistant's words</th>
              <td>the match counts half</td>
            </tr>
          )}
        </tbody>
      </table>
    </details>
  );
}
