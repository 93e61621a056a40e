import { useEffect, useMemo, useState } from "react";
import {
  commands,
  type AdapterView_Serialize as AdapterView,
  type RunView_Serialize as RunView,
  type TrainOptions,
} from "./bindings";
import { answered, failed } from "./loaded";
import { Chart, type ChartOption } from "./Chart";
import { describe } from "./errors";
import { count, num } from "./format";
import { ReportPanel } from "./TrainingResults";

const TARGETS: [string, string][] = [
  ["q_proj", "Attention: query"],
  ["k_proj", "Attention: key"],
  ["v_proj", "Attention: value"],
  ["o_proj", "Attention: output"],
  ["gate_proj", "Feed-forward: gate"],
  ["up_proj", "Feed-forward: up"],
  ["down_proj", "Feed-forward: down"],
];

function seconds(s: number | null): string {
  if (s === null || !Number.isFinite(s)) return "–";
  if (s < 90) return `${Math.round(s)} s`;
  return `${Math.round(s / 60)} min`;
}

// A number field that keeps what is typed (an empty field is not 0 until it is left).
export function NumberField({
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
export function Train({ active, dark, onDone }: { active: boolean; dark: boolean; onDone: () => void }) {
  const [options, setOptions] = useState<TrainOptions | null>(null);
  const [approved, setApproved] = useState<number | null>(null);
  // The concepts of the approved memories: each can be taught to an adapter of its own.
  const [topics, setTopics] = useState<string[]>([]);
  const [runs, setRuns] = useState<RunView[]>([]);
  const [report, setReport] = useState<AdapterView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);
  const [model, setModel] = useState<string | null>(null);

  const loadRuns = () => answered(commands.trainingRuns(), setRuns, setError);
  useEffect(() => {
    if (!active) return;
    commands.trainDefaults().then((r) => !failed(r) && setOptions((o) => o ?? r.data));
    answered(commands.trainingModel(), setModel);
    commands.trainingCandidates({ status: "approved", kind: null, tag: null, concept: null, sort: null }).then((r) => {
      if (failed(r)) return;
      setTopics(r.data.concept_names);
      if (!options?.topic) setApproved(r.data.approved);
    });
    loadRuns();
  }, [active]);
  // Teaching one concept: how many of its memories are approved.
  const chooseTopic = (topic: string | null) => {
    setOptions((o) => (o ? { ...o, topic } : o));
    setApproved(null);
    commands
      .trainingCandidates({ status: "approved", kind: null, tag: null, concept: topic, sort: null })
      .then((r) => !failed(r) && setApproved(topic ? r.data.candidates.length : r.data.approved));
  };

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
    commands.adapters().then((r) => !failed(r) && setReport(r.data.find((a) => a.id === latest.adapter_id) ?? null));
  }, [latest?.status, latest?.adapter_id]);

  const start = async (resume: string | null) => {
    if (!options) return;
    setError(null);
    setStarting(true);
    const r = await (resume ? commands.resumeTraining(resume) : commands.trainApproved(options));
    setStarting(false);
    if (failed(r) && r.error.code !== "cancelled") setError(describe(r.error));
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
            : `${count(approved, "approved memory", "approved memories")} will be taught${model ? ` to ${model}, the model that answers` : ""}. Teaching takes a few minutes; you can keep using Strata meanwhile.`}
      </p>
      {topics.length > 0 && options && (
        <label className="field" id="train-topic-field">
          <span>Teach</span>
          <select id="train-topic" value={options.topic ?? ""} onChange={(e) => chooseTopic(e.target.value || null)}>
            <option value="">Everything approved</option>
            {topics.map((t) => (
              <option key={t} value={t}>
                Only “{t}”
              </option>
            ))}
          </select>
          <span className="muted">One concept at a time makes an adapter for that topic; several can be used side by side, and each question uses the one it is about.</span>
        </label>
      )}
      {options && <TrainSettings options={options} set={set} />}
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

// The run's settings, folded away: rank, passes, learning rate, batch, replay, the parts that
// learn, and the gate an adapter must pass to be used.
function TrainSettings({ options, set }: { options: TrainOptions; set: (patch: Partial<TrainOptions>) => void }) {
  return (
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
        <PercentField
          id="train-min-recall"
          label="Use it only if it answers at least this share of the check questions (%)"
          share={options.min_recall}
          max={100}
          onChange={(v) => set({ min_recall: v })}
        />
        <PercentField
          id="train-margin"
          label="… and general text gets at most this much harder for it (%)"
          share={options.margin}
          max={1000}
          onChange={(v) => set({ margin: v })}
        />
      </div>
    </details>
  );
}

// A share (0.8) typed as a percentage (80).
function PercentField(p: { id: string; label: string; share: Parameters<typeof num>[0]; max: number; onChange: (share: number) => void }) {
  return <NumberField id={p.id} label={p.label} value={Math.round(num(p.share) * 100)} max={p.max} onChange={(v) => p.onChange(v / 100)} />;
}
