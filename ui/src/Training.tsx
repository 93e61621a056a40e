import { useEffect, useMemo, useState } from "react";
import { useLoaded } from "./loaded";
import {
  commands,
  type AdapterView_Serialize as AdapterView,
  type CandidateEventView,
  type ExampleForm,
  type SetMemoryView_Serialize as SetMemoryView,
  type CandidateView_Serialize as CandidateView,
  type RunView_Serialize as RunView,
  type TrainOptions,
  type Verdict,
} from "./bindings";
import { Chart, type ChartOption } from "./Chart";
import { describe } from "./errors";
import { KIND_WORDS, count, num, pct, title, when } from "./format";
import { JobBar, useJob } from "./jobs";
import { Adapters, ReportPanel } from "./TrainingResults";

type Tab = "candidates" | "examples" | "train" | "adapters";

const TARGETS: [string, string][] = [
  ["q_proj", "Attention: query"],
  ["k_proj", "Attention: key"],
  ["v_proj", "Attention: value"],
  ["o_proj", "Attention: output"],
  ["gate_proj", "Feed-forward: gate"],
  ["up_proj", "Feed-forward: up"],
  ["down_proj", "Feed-forward: down"],
];

const STATUS_WORDS: Record<string, string> = { flagged: "Waiting", approved: "Approved", rejected: "Rejected" };


function seconds(s: number | null): string {
  if (s === null || !Number.isFinite(s)) return "–";
  if (s < 90) return `${Math.round(s)} s`;
  return `${Math.round(s / 60)} min`;
}

// The Training screen: which memories are worth teaching the on-device model (found by the
// criteria in Settings, decided by a person), training them into an adapter with its progress
// live, the evaluation, and the adapters: use one, roll back, compare.
// The step shown last, kept while the app runs: coming back to Training lands where one left.
let lastTab: Tab = "candidates";

export function Training({ active, dark, onOpenMemory }: { active: boolean; dark: boolean; onOpenMemory: (id: string) => void }) {
  const [tab, setShown] = useState<Tab>(lastTab);
  const setTab = (t: Tab) => {
    lastTab = t;
    setShown(t);
  };
  // A run going on is what one comes back to see.
  useEffect(() => {
    commands.trainingRuns().then((r) => {
      if (r.status === "ok" && r.data[0]?.status === "running" && !r.data[0].interrupted) setTab("train");
    });
  }, []);
  return (
    <div className="training" id="training">
      <h2>Training</h2>
      <p className="muted intro">
        Strata can teach the model on this computer the things you rely on most, so it knows them without being reminded.
        You choose what it learns; it is checked before it is used, and you can undo it.
      </p>
      <div className="tabs" role="tablist">
        {(
          [
            ["candidates", "1. Choose what to teach"],
            ["examples", "2. Check the examples"],
            ["train", "3. Teach and check"],
            ["adapters", "4. Use what was learned"],
          ] as [Tab, string][]
        ).map(([t, label]) => (
          <button key={t} role="tab" id={`tab-${t}`} aria-selected={tab === t} className={tab === t ? "active" : ""} onClick={() => setTab(t)}>
            {label}
          </button>
        ))}
      </div>
      {tab === "candidates" && <Candidates active={active} onOpenMemory={onOpenMemory} onTrain={() => setTab("train")} />}
      {tab === "examples" && <Examples active={active} onOpenMemory={onOpenMemory} />}
      {tab === "train" && <Train active={active} dark={dark} onDone={() => setTab("adapters")} />}
      {tab === "adapters" && <Adapters active={active} dark={dark} />}
    </div>
  );
}

// The queue: find candidates, filter and sort them, approve or reject each or many.
function Candidates({ active, onOpenMemory, onTrain }: { active: boolean; onOpenMemory: (id: string) => void; onTrain: () => void }) {
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
    if (r.status !== "ok") return setError(describe(r.error));
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
    if (r.status !== "ok") return setError(describe(r.error));
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

// The approved memories' examples as they will be taught: each memory's questions and answers
// (the held-out ones only check what was learned), editable and removable, with what is wrong
// and how to mend it. Nobody edits a file.
function Examples({ active, onOpenMemory }: { active: boolean; onOpenMemory: (id: string) => void }) {
  const { data: set, error, setError, reload: load } = useLoaded(active, commands.trainingSet);
  if (!set) return <section className="panel">{error ?? "Preparing the examples… (the first time loads the model: a few seconds)"}</section>;
  return (
    <section className="panel" id="examples">
      <p id="examples-summary">
        {set.memories.length === 0
          ? "No memory is approved yet: choose what to teach first."
          : `${count(set.train, "example", "examples")} to learn from and ${count(set.held_out, "question", "questions")} kept aside to check what was learned, from ${count(set.memories.length, "approved memory", "approved memories")}.`}
      </p>
      {set.blocking.map((b) => (
        <div className="error" key={b}>
          {b}
        </div>
      ))}
      {set.other.map((b) => (
        <p className="notice" key={b}>
          {b}
        </p>
      ))}
      {error && <div className="error">{error}</div>}
      {set.memories.map((m) => (
        <MemoryExamples key={m.memory.id} m={m} onOpen={() => onOpenMemory(m.memory.id)} onSaved={load} onError={setError} />
      ))}
    </section>
  );
}

function MemoryExamples({
  m,
  onOpen,
  onSaved,
  onError,
}: {
  m: SetMemoryView;
  onOpen: () => void;
  onSaved: () => void;
  onError: (e: string) => void;
}) {
  const [draft, setDraft] = useState<ExampleForm[] | null>(null);
  const shown = draft ?? m.examples;
  const change = (i: number, patch: Partial<ExampleForm>) => setDraft(shown.map((e, j) => (j === i ? { ...e, ...patch } : e)));
  const save = async (examples: ExampleForm[] | null) => {
    const r = await commands.saveExamples(m.memory.id, examples);
    if (r.status !== "ok") return onError(describe(r.error));
    setDraft(null);
    onSaved();
  };
  return (
    <div className="set-memory" data-id={m.memory.id}>
      <h4>
        <button className="link" onClick={onOpen} title="Open in Memories">
          {title(m.memory)}
        </button>
        {m.edited && <span className="chip">edited by you</span>}
      </h4>
      {m.problems.map((p) => (
        <p className="error set-problem" key={p}>
          {p}
        </p>
      ))}
      <table className="numbers answers set-examples">
        <thead>
          <tr>
            <th>Question</th>
            <th>Answer to learn</th>
            <th>Use</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {shown.map((e, i) => (
            <tr key={i}>
              <td>
                <textarea
                  className="example-question"
                  rows={2}
                  value={e.question}
                  onChange={(ev) => change(i, { question: ev.target.value })}
                />
              </td>
              <td>
                <textarea className="example-answer" rows={2} value={e.answer} onChange={(ev) => change(i, { answer: ev.target.value })} />
              </td>
              <td className="muted">{e.held_out ? `check only (right answer has “${e.expected ?? ""}”)` : "learn"}</td>
              <td>
                <button className="link example-remove" onClick={() => setDraft(shown.filter((_, j) => j !== i))} title="Remove this example">
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="actions-row">
        {draft && (
          <>
            <button className="primary example-save" onClick={() => save(draft)}>
              Save these examples
            </button>
            <button onClick={() => setDraft(null)}>Discard changes</button>
          </>
        )}
        {!draft && m.edited && (
          <button className="example-reset" onClick={() => save(null)}>
            Back to the examples Strata wrote
          </button>
        )}
      </div>
    </div>
  );
}

// A number field that keeps what is typed (an empty field is not 0 until it is left).
function NumberField({
  id,
  label,
  value,
  onChange,
  step = "1",
  min = 0,
  max,
}: {
  id: string;
  label: string;
  value: number;
  onChange: (v: number) => void;
  step?: string;
  min?: number;
  max?: number;
}) {
  const [text, setText] = useState(String(value));
  useEffect(() => setText(String(value)), [value]);
  return (
    <label>
      {label}
      <input
        id={id}
        type="number"
        step={step}
        min={min}
        max={max}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          if (e.target.value.trim() !== "" && Number.isFinite(Number(e.target.value))) onChange(Number(e.target.value));
        }}
      />
    </label>
  );
}

// Start a run on the approved memories (defaults, or the advanced settings), follow it live,
// stop it, resume a stopped or interrupted one.
function Train({ active, dark, onDone }: { active: boolean; dark: boolean; onDone: () => void }) {
  const [options, setOptions] = useState<TrainOptions | null>(null);
  const [approved, setApproved] = useState<number | null>(null);
  const [runs, setRuns] = useState<RunView[]>([]);
  const [report, setReport] = useState<AdapterView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);

  const loadRuns = () => commands.trainingRuns().then((r) => (r.status === "ok" ? setRuns(r.data) : setError(describe(r.error))));
  useEffect(() => {
    if (!active) return;
    commands.trainDefaults().then((r) => r.status === "ok" && setOptions((o) => o ?? r.data));
    commands
      .trainingCandidates({ status: "approved", kind: null, tag: null, concept: null, sort: null })
      .then((r) => r.status === "ok" && setApproved(r.data.approved));
    loadRuns();
  }, [active]);

  const latest = runs[0] ?? null;
  const live = (latest?.status === "running" && !latest.interrupted) || starting;
  // While a run goes on (started here — it is recorded once its examples are ready — or in
  // another window or on the command line), follow it.
  useEffect(() => {
    if (!active || !live) return;
    const t = window.setInterval(loadRuns, 1000);
    return () => window.clearInterval(t);
  }, [active, live]);
  // A finished run's adapter, with its report.
  useEffect(() => {
    if (latest?.status !== "finished" || !latest.adapter_id) return setReport(null);
    commands.adapters().then((r) => r.status === "ok" && setReport(r.data.find((a) => a.id === latest.adapter_id) ?? null));
  }, [latest?.status, latest?.adapter_id]);

  const start = async (resume: string | null) => {
    if (!options) return;
    setError(null);
    setStarting(true);
    const r = await (resume ? commands.resumeTraining(resume) : commands.trainApproved(options));
    setStarting(false);
    if (r.status !== "ok" && r.error.code !== "cancelled") setError(describe(r.error));
    loadRuns();
  };

  const set = (patch: Partial<TrainOptions>) => options && setOptions({ ...options, ...patch });
  const stoppable = latest && (latest.status === "cancelled" || latest.interrupted || latest.status === "failed");
  return (
    <section className="panel" id="train">
      <p id="train-approved">
        {approved === null
          ? "…"
          : approved === 0
            ? "No memory is approved yet: choose what to teach first."
            : `${count(approved, "approved memory", "approved memories")} will be taught. Teaching takes a few minutes; you can keep using Strata meanwhile.`}
      </p>
      {options && (
        <details className="advanced" id="train-advanced">
          <summary>Advanced settings</summary>
          <div className="form">
            <NumberField id="train-rank" label="Rank (how much it can learn; higher is larger and slower)" value={options.rank} min={1} max={64} onChange={(v) => set({ rank: v })} />
            <NumberField id="train-epochs" label="Passes over the examples" value={options.epochs} min={1} max={50} onChange={(v) => set({ epochs: v })} />
            <NumberField id="train-lr" label="Learning rate" value={num(options.lr)} step="0.0001" onChange={(v) => set({ lr: v })} />
            <NumberField id="train-batch" label="Examples per step" value={options.batch} min={1} max={64} onChange={(v) => set({ batch: v })} />
            <NumberField
              id="train-replay"
              label="General questions mixed in (so it keeps what it knew)"
              value={options.replay}
              max={200}
              onChange={(v) => set({ replay: v })}
            />
            <fieldset>
              <legend>Parts of the model that learn</legend>
              {TARGETS.map(([t, label]) => (
                <label key={t} className="check">
                  <input
                    type="checkbox"
                    id={`train-target-${t}`}
                    checked={options.targets.includes(t)}
                    onChange={(e) => set({ targets: e.target.checked ? [...options.targets, t] : options.targets.filter((x) => x !== t) })}
                  />
                  {label}
                </label>
              ))}
            </fieldset>
            <NumberField
              id="train-min-recall"
              label="Use it only if it answers at least this share of the check questions (%)"
              value={Math.round(num(options.min_recall) * 100)}
              max={100}
              onChange={(v) => set({ min_recall: v / 100 })}
            />
            <NumberField
              id="train-margin"
              label="… and general text gets at most this much harder for it (%)"
              value={Math.round(num(options.margin) * 100)}
              max={1000}
              onChange={(v) => set({ margin: v / 100 })}
            />
          </div>
        </details>
      )}
      <div className="actions-row">
        <button id="train-start" className="primary" disabled={!approved || live || starting} onClick={() => start(null)}>
          Teach the approved memories
        </button>
        {stoppable && latest.status !== "failed" && (
          <button id="train-resume" disabled={live || starting} onClick={() => start(latest.id)}>
            Resume where it stopped
          </button>
        )}
      </div>
      {error && <div className="error">{error}</div>}
      {starting && (!latest || latest.status !== "running") && (
        <p id="run-words" role="status">
          Preparing the examples and loading the model…
        </p>
      )}
      {latest && !(starting && latest.status !== "running") && <RunPanel run={latest} dark={dark} />}
      {report?.report && !live && (
        <div id="train-report">
          <ReportPanel report={report.report} dark={dark} />
          <button id="train-to-adapters" onClick={onDone}>
            Use it or compare it →
          </button>
        </div>
      )}
    </section>
  );
}

function runWords(r: RunView): string {
  if (r.interrupted) return "Stopped when Strata closed. Resume it to carry on from its last checkpoint.";
  switch (r.status) {
    case "running":
      return r.stage === "evaluating"
        ? `Checking what it learned: ${r.checked} of ${r.to_check || "…"} answers`
        : r.steps
          ? `Teaching: step ${r.step} of ${r.steps}`
          : "Getting ready…";
    case "finished":
      return `Done: adapter ${r.adapter_id} was made from ${count(r.sources, "memory", "memories")}.`;
    case "cancelled":
      return `Stopped at step ${r.step} of ${r.steps}. Resume it to carry on.`;
    default:
      return `It did not finish: ${r.message ?? "an error"}.`;
  }
}

function RunPanel({ run, dark }: { run: RunView; dark: boolean }) {
  const option: ChartOption = useMemo(
    () => ({
      grid: { left: 44, right: 12, top: 12, bottom: 28 },
      tooltip: { trigger: "axis" },
      xAxis: { type: "category", name: "step", data: run.losses.map((_, i) => i + 1) },
      yAxis: { type: "value", name: "how far off", scale: true },
      series: [{ name: "How far off its answers still are", type: "line", showSymbol: false, data: run.losses }],
    }),
    [run.losses.length],
  );
  const running = run.status === "running" && !run.interrupted;
  const last = run.losses.length ? run.losses[run.losses.length - 1] : null;
  return (
    <div className="run" id="run" data-status={run.interrupted ? "interrupted" : run.status}>
      <p id="run-words" role="status">
        {runWords(run)}
      </p>
      {running && run.stage === "training" && run.steps > 0 && <progress id="run-progress" max={run.steps} value={run.step} />}
      {running && run.stage === "evaluating" && run.to_check > 0 && <progress max={run.to_check} value={run.checked} />}
      <div className="cards">
        <div className="card">
          <strong id="run-step">
            {run.step} / {run.steps || "…"}
          </strong>
          <span className="muted">steps</span>
        </div>
        <div className="card">
          <strong id="run-loss">{last === null ? "–" : last.toFixed(3)}</strong>
          <span className="muted">how far off its answers still are (lower: it knows them better)</span>
        </div>
        <div className="card">
          <strong id="run-speed">{run.tokens_per_s === null ? "–" : Math.round(run.tokens_per_s).toLocaleString()}</strong>
          <span className="muted">word pieces read per second</span>
        </div>
        <div className="card">
          <strong id="run-eta">{running && run.stage === "training" ? seconds(run.eta_s) : "–"}</strong>
          <span className="muted">time left</span>
        </div>
      </div>
      {running && (
        <button id="train-cancel" onClick={() => commands.cancelJob("train")}>
          Stop (it can resume later)
        </button>
      )}
      {run.losses.length > 1 && <Chart option={option} dark={dark} label="Training loss by step" height={180} />}
    </div>
  );
}
