// Training's results: a run's report (what was learned, checked against retrieval and general
// text) and the registry of adapters (use one, roll back, compare two, check it again).
import { useEffect, useMemo, useState } from "react";
import { useLoaded, answered, failed } from "./loaded";
import {
  commands,
  type AdapterEventView,
  type AdapterView_Serialize as AdapterView,
  type ReportView,
} from "./bindings";
import { Chart, type ChartOption } from "./Chart";
import { count, num, pct, when } from "./format";
import { JobBar, useJob } from "./jobs";

// An evaluation: the shares as a chart and a table, the verdict, each question's answers.
export function ReportPanel({ report, dark }: { report: ReportView; dark: boolean }) {
  const option: ChartOption = useMemo(
    () => ({
      grid: { left: 44, right: 12, top: 24, bottom: 28 },
      tooltip: {},
      xAxis: { type: "category", data: ["With what it learned", "Model alone", "Model reminded (search)"] },
      yAxis: { type: "value", max: 100, name: "% right" },
      series: [
        {
          name: "Answered right",
          type: "bar",
          data: [report.recall_with_adapter, report.recall_without, report.recall_with_retrieval].map((x) => Math.round(num(x) * 100)),
          label: { show: true, position: "top", formatter: "{c}%" },
        },
      ],
    }),
    [report],
  );
  const change = num(report.perplexity_adapter) / num(report.perplexity_base) - 1;
  return (
    <div className="report" id="report">
      <p className={report.passed ? "verdict passed" : "verdict failed"} id="report-verdict">
        {report.verdict}
      </p>
      <Chart option={option} dark={dark} label="Share of check questions answered right" height={200} />
      <table className="numbers" id="report-table">
        <thead>
          <tr>
            <th></th>
            <th>With what it learned</th>
            <th>Model alone</th>
            <th>Reminded by search</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>
              Check questions answered right ({report.questions} questions on {count(report.facts, "fact", "facts")})
            </td>
            <td id="report-with">{pct(report.recall_with_adapter)}</td>
            <td id="report-without">{pct(report.recall_without)}</td>
            <td>{pct(report.recall_with_retrieval)}</td>
          </tr>
          <tr>
            <td>How hard general text is for it (perplexity; lower is better)</td>
            <td id="report-perplexity">
              {num(report.perplexity_adapter).toFixed(2)} ({change >= 0 ? "+" : ""}
              {(change * 100).toFixed(1)}%)
            </td>
            <td>{num(report.perplexity_base).toFixed(2)}</td>
            <td>–</td>
          </tr>
        </tbody>
      </table>
      <details id="report-answers">
        <summary>Every check question and the answers</summary>
        <table className="numbers answers">
          <thead>
            <tr>
              <th>Question</th>
              <th>Right answer has</th>
              <th>With what it learned</th>
              <th>Model alone</th>
            </tr>
          </thead>
          <tbody>
            {report.rows.map((r, i) => (
              <tr key={i}>
                <td>{r.question}</td>
                <td>{r.expected}</td>
                <td className={r.with_adapter_right ? "right" : "wrong"}>
                  {r.with_adapter_right ? "✓ " : "✗ "}
                  {r.with_adapter}
                </td>
                <td className={r.without_right ? "right" : "wrong"}>
                  {r.without_right ? "✓ " : "✗ "}
                  {r.without}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </div>
  );
}

const ADAPTER_STATUS: Record<string, string> = { candidate: "Not in use", active: "In use", retired: "Retired" };

// The registry: every adapter with its figures; use one, roll back, compare two.
export function Adapters({ active, dark }: { active: boolean; dark: boolean }) {
  const [open, setOpen] = useState<string | null>(null);
  const [compare, setCompare] = useState<string[]>([]);
  const [history, setHistory] = useState<AdapterEventView[]>([]);
  const [said, setSaid] = useState<string | null>(null);
  const { data: all, error, setError, reload: load } = useLoaded(active, commands.adapters);
  useEffect(() => {
    if (!open) return setHistory([]);
    answered(commands.adapterHistory(open), setHistory);
  }, [open, all]);

  const [forcing, setForcing] = useState<{ a: AdapterView; alongside: boolean } | null>(null);
  const [retiring, setRetiring] = useState<AdapterView | null>(null);
  const retire = async (a: AdapterView) => {
    setRetiring(null);
    const r = await commands.retireAdapter(a.id);
    if (failed(r, setError)) return;
    await load();
    setSaid(`${a.id} is retired: it will not be used again.`);
  };
  // "Use it": instead of the adapters in use. "Use it too": beside them (each question then
  // picks the one it is about, or none).
  const activate = async (a: AdapterView, force = false, alongside = false) => {
    setError(null);
    if (a.passed !== true && !force) return setForcing({ a, alongside });
    setForcing(null);
    const r = await commands.activateAdapter(a.id, force, alongside);
    if (failed(r, setError)) return;
    await load();
    setSaid(
      alongside
        ? `The chat's model now uses ${a.id} too: each question uses the adapter it is about, or none.`
        : `The chat's model now uses ${a.id}.`,
    );
  };
  const rollback = async (a: AdapterView) => {
    setError(null);
    const r = await commands.rollbackAdapter(a.id);
    if (failed(r, setError)) return;
    await load();
    const back = r.data.map((x) => x.id).join(", ");
    setSaid(
      r.data.length
        ? `Rolled back ${a.id}: in use now ${back}.`
        : `Rolled back ${a.id}: the model answers on its own again.`,
    );
  };

  if (!all) return <section className="panel">{error ?? "Loading…"}</section>;
  const shown = all.find((a) => a.id === open) ?? null;
  const pair = compare.map((id) => all.find((a) => a.id === id)).filter((a): a is AdapterView => !!a);
  const inUse = all.filter((a) => a.status === "active");
  return (
    <section className="panel" id="adapters">
      {said && (
        <p className="notice" id="adapters-said" role="status">
          {said}
        </p>
      )}
      {error && <div className="error">{error}</div>}
      {inUse.length > 1 && (
        <p className="muted" id="adapters-in-use">
          {inUse.length} adapters are in use, each taught different facts: every question uses the one it is about, or none
          when it is about none of them.
        </p>
      )}
      {all.length === 0 ? (
        <p className="muted" id="adapters-empty">
          Nothing has been taught yet. What the model learns from your memories appears here, to use, compare or undo.
        </p>
      ) : (
        <table className="numbers adapters" id="adapter-table">
          <thead>
            <tr>
              <th>Compare</th>
              <th>Adapter</th>
              <th>Made</th>
              <th>Status</th>
              <th>For</th>
              <th>Check</th>
              <th>From</th>
              <th>Right with / alone</th>
              <th>Answers</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {all.map((a) => (
              <AdapterRow
                key={a.id}
                a={a}
                open={a.id === open}
                compared={compare.includes(a.id)}
                onCompare={(on) => setCompare(on ? [...compare, a.id].slice(-2) : compare.filter((x) => x !== a.id))}
                onOpen={() => setOpen(open === a.id ? null : a.id)}
                alongside={inUse.length > 0 && inUse.every((u) => u.base_model === a.base_model)}
                onActivate={(alongside) => activate(a, false, alongside)}
                onRetire={() => setRetiring(a)}
                onRollback={() => rollback(a)}
              />
            ))}
          </tbody>
        </table>
      )}
      {retiring && <RetireAsk a={retiring} onRetire={() => retire(retiring)} onKeep={() => setRetiring(null)} />}
      {forcing && <ForceAsk a={forcing.a} onForce={() => activate(forcing.a, true, forcing.alongside)} onKeep={() => setForcing(null)} />}
      {all
        .filter((a) => a.status === "active" && a.warning)
        .map((a) => (
          <p className="error" id="adapter-warning" key={a.id}>
            What the model learned and uses now ({a.id}): {a.warning}
          </p>
        ))}
      {pair.length === 2 && <Comparison a={pair[0]} b={pair[1]} />}
      {shown && <AdapterDetail shown={shown} history={history} dark={dark} onChecked={load} onError={setError} />}
    </section>
  );
}

// How an adapter does in use: each check since (its questions asked again against the
// memories as they are now) over time, and a check on demand.
function InUse({ adapter, dark, onChecked, onError }: { adapter: AdapterView; dark: boolean; onChecked: () => void; onError: (e: string) => void }) {
  const job = useJob();
  const option: ChartOption = useMemo(
    () => ({
      grid: { left: 44, right: 12, top: 16, bottom: 28 },
      tooltip: { trigger: "axis" },
      xAxis: { type: "category", data: adapter.checks.map((c) => when(c.at)) },
      yAxis: { type: "value", max: 100, name: "% right" },
      series: [{ name: "Check questions right", type: "line", data: adapter.checks.map((c) => Math.round(num(c.recall) * 100)) }],
    }),
    [adapter.checks],
  );
  const check = async () => {
    const r = await job.run("Asking its check questions again", (id, ch) => commands.checkAdapter(id, adapter.id, ch));
    if (failed(r, onError)) return;
    onChecked();
  };
  const last = adapter.checks.length ? adapter.checks[adapter.checks.length - 1] : null;
  return (
    <div className="in-use" id="in-use">
      <h4>How it does in use</h4>
      <p className="muted">
        {adapter.status === "active" ? "Checked again once a day while it is in use, and whenever you ask. " : ""}A check asks its
        questions again and judges the answers against what your memories say now.
      </p>
      {last ? (
        <p id="in-use-last">
          Last checked {when(last.at)}: {pct(last.recall)} of {count(last.questions, "question", "questions")} answered right
          {last.changed ? `; ${count(last.changed, "fact has", "facts have")} changed since it was taught` : ""}
          {last.gone ? `; ${count(last.gone, "fact was", "facts were")} forgotten` : ""}.
        </p>
      ) : (
        <p className="muted" id="in-use-last">
          Not checked in use yet.
        </p>
      )}
      {adapter.warning && <p className="error">{adapter.warning}</p>}
      {adapter.checks.length > 1 && <Chart option={option} dark={dark} label="Check questions answered right, over time" height={160} />}
      <Usage adapter={adapter} dark={dark} />
      <button id="check-now" disabled={job.running} onClick={check}>
        Check it now
      </button>
      <JobBar job={job} />
    </div>
  );
}

// How often questions chose the adapter, day by day, and what people said of its answers.
function Usage({ adapter, dark }: { adapter: AdapterView; dark: boolean }) {
  const days = adapter.days;
  const option: ChartOption = useMemo(
    () => ({
      grid: { left: 44, right: 12, top: 28, bottom: 28 },
      tooltip: { trigger: "axis" },
      legend: { top: 0 },
      xAxis: { type: "category", data: days.map((d) => d.day) },
      yAxis: { type: "value", minInterval: 1, name: "answers" },
      series: [
        { name: "Answered with it", type: "bar", data: days.map((d) => d.answered) },
        { name: "Marked helpful", type: "bar", data: days.map((d) => d.helpful) },
        { name: "Marked wrong", type: "bar", data: days.map((d) => d.wrong) },
      ],
    }),
    [days],
  );
  const helpful = days.reduce((n, d) => n + d.helpful, 0);
  const wrong = days.reduce((n, d) => n + d.wrong, 0);
  return (
    <div className="usage" id="adapter-usage">
      <p id="adapter-usage-said">
        {adapter.answered === 0
          ? "No question has used it yet."
          : `It answered ${count(adapter.answered, "question", "questions")}: ${helpful} marked helpful, ${wrong} marked wrong.`}
      </p>
      {days.length > 0 && <Chart option={option} dark={dark} label="Questions it answered, by day" height={160} />}
    </div>
  );
}

function Comparison({ a, b }: { a: AdapterView; b: AdapterView }) {
  const row = (label: string, f: (x: AdapterView) => string) => (
    <tr>
      <td>{label}</td>
      <td>{f(a)}</td>
      <td>{f(b)}</td>
    </tr>
  );
  const r = (x: AdapterView, f: (r: ReportView) => string) => (x.report ? f(x.report) : "–");
  return (
    <table className="numbers comparison" id="adapter-compare">
      <thead>
        <tr>
          <th></th>
          <th>{a.id}</th>
          <th>{b.id}</th>
        </tr>
      </thead>
      <tbody>
        {row("Made", (x) => when(x.created_at))}
        {row("Status", (x) => ADAPTER_STATUS[x.status] ?? x.status)}
        {row("Memories taught", (x) => String(x.sources.length))}
        {row("Check questions right", (x) => r(x, (r) => pct(r.recall_with_adapter)))}
        {row("Model alone", (x) => r(x, (r) => pct(r.recall_without)))}
        {row("General text perplexity", (x) => r(x, (r) => num(r.perplexity_adapter).toFixed(2)))}
        {row("Rank / passes", (x) => `${x.rank ?? "?"} / ${x.epochs ?? "?"}`)}
        {row("Size", (x) => `${(num(x.bytes) / 1e6).toFixed(1)} MB`)}
      </tbody>
    </table>
  );
}

type RowProps = {
  a: AdapterView;
  open: boolean;
  compared: boolean;
  onCompare: (on: boolean) => void;
  onOpen: () => void;
  alongside: boolean;
  onActivate: (alongside: boolean) => void;
  onRetire: () => void;
  onRollback: () => void;
};

// One adapter in the table: made when, in use or not, checked, from how many memories, how
// often right with it and without; and what can be done with it.
function AdapterRow({ a, open, compared, onCompare, onOpen, alongside, onActivate, onRetire, onRollback }: RowProps) {
  return (
    <tr data-id={a.id} className={open ? "open" : ""}>
      <td>
        <input
          type="checkbox"
          aria-label={`Compare ${a.id}`}
          checked={compared}
          onChange={(e) => onCompare(e.target.checked)}
        />
      </td>
      <td>
        <button className="link adapter-open" onClick={onOpen}>
          {a.id}
        </button>
      </td>
      <td>{when(a.created_at)}</td>
      <td className="adapter-status">{ADAPTER_STATUS[a.status] ?? a.status}</td>
      <td className="adapter-model">{a.model_title}</td>
      <td>{a.passed === null ? "Not checked" : a.passed ? "Passed" : "Did not pass"}</td>
      <td>{count(a.sources.length, "memory", "memories")}</td>
      <td>{a.report ? `${pct(a.report.recall_with_adapter)} / ${pct(a.report.recall_without)}` : "–"}</td>
      <td className="adapter-answered">{a.answered}</td>
      <td>
        {a.status === "candidate" && (
          <>
            <button className="adapter-activate" onClick={() => onActivate(false)}>
              Use it
            </button>{" "}
            {alongside && (
              <>
                <button className="adapter-alongside" onClick={() => onActivate(true)}>
                  Use it too
                </button>{" "}
              </>
            )}
            <button className="adapter-retire" onClick={onRetire}>
              Retire
            </button>
          </>
        )}
        {a.status === "active" && (
          <button className="adapter-rollback" onClick={onRollback}>
            Roll back
          </button>
        )}
      </td>
    </tr>
  );
}

// Retiring is for good: asked first.
function RetireAsk({ a, onRetire, onKeep }: { a: AdapterView; onRetire: () => void; onKeep: () => void }) {
  return (
    <div className="notice" id="retire-ask" role="alertdialog">
      Retire {a.id}? It can never be used again (teaching the same memories makes a new one).{" "}
      <button id="retire-confirm" onClick={onRetire}>
        Retire it
      </button>{" "}
      <button onClick={onKeep}>Keep it</button>
    </div>
  );
}

// Using an adapter that did not pass its check: asked first, with why it did not.
function ForceAsk({ a, onForce, onKeep }: { a: AdapterView; onForce: () => void; onKeep: () => void }) {
  return (
    <div className="notice" id="force-ask" role="alertdialog">
      {a.id} did not pass its check
      {a.report ? ` (${a.report.verdict.replace(/^Not good enough to use: /, "")})` : " (it was never checked)"}. The chat
      may answer worse with it. Use it anyway?{" "}
      <button id="force-confirm" onClick={onForce}>
        Use it anyway
      </button>{" "}
      <button onClick={onKeep}>Keep things as they are</button>
    </div>
  );
}

// The adapter opened: how it was made, its report, its use since, what happened to it.
function AdapterDetail(p: { shown: AdapterView; history: AdapterEventView[]; dark: boolean; onChecked: () => void; onError: (e: string) => void }) {
  const { shown, history, dark, onChecked, onError } = p;
  // How it fares among the adapters in use (embeddings only: quick).
  const [selection, setSelection] = useState<string | null>(null);
  useEffect(() => {
    setSelection(null);
    answered(commands.adapterSelection(shown.id), (s) => setSelection(s?.said ?? null));
  }, [shown.id, shown.status]);
  return (
    <div className="adapter-detail" id="adapter-detail">
      <h3>{shown.id}</h3>
      <p className="muted">
        Base model {shown.base_model}; rank {shown.rank ?? "?"}, {shown.epochs ?? "?"} passes, learning rate {shown.lr ?? "?"}, parts{" "}
        {shown.targets.join(", ") || "?"}; {(num(shown.bytes) / 1e6).toFixed(1)} MB.
      </p>
      {shown.report ? <ReportPanel report={shown.report} dark={dark} /> : <p className="muted">Not checked yet.</p>}
      {selection && <p id="adapter-selection">{selection}</p>}
      <InUse adapter={shown} dark={dark} onChecked={onChecked} onError={onError} />
      <h4>What happened</h4>
      <ol className="timeline" id="adapter-history">
        {history.map((e, i) => (
          <li key={i}>
            {when(e.at)}: {e.kind.replace("_", " ")}
            {e.detail ? ` — ${e.detail}` : ""}
          </li>
        ))}
      </ol>
    </div>
  );
}
