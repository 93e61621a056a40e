import type { DashboardView_Serialize as DashboardView, RangeForm } from "./bindings";
import type { Clicked } from "./Chart";
import type { DrillWhat } from "./Drill";
import { KIND_WORDS, count, origin, title, when } from "./format";
import { KINDS } from "./AnalyticsCharts";

// The Analytics screen's parts that are not charts: what it is narrowed to, the headline
// cards, the lists of memories and searches, and the concepts' passes.

// The periods a person picks from, in days (none: all time).
const PERIODS: [string, number | null][] = [
  ["Last 7 days", 7],
  ["Last 30 days", 30],
  ["Last 90 days", 90],
  ["All time", null],
];

export type Narrowed = {
  days: number | null;
  bucket: string;
  kind: string;
  client: string;
  tag: string;
};

// What the screen is narrowed to: the period, the bucket, a type, who wrote, a tag.
export function Filters({ data, value, onChange }: { data: DashboardView; value: Narrowed; onChange: (v: Narrowed) => void }) {
  const m = data.memory;
  const { days, bucket, kind, client, tag } = value;
  const set = (part: Partial<Narrowed>) => onChange({ ...value, ...part });
  const kinds = KINDS;
  return (
    <div className="filters" id="analytics-filters">
      <select id="period" aria-label="Period" value={days ?? "all"} onChange={(e) => set({ days: e.target.value === "all" ? null : Number(e.target.value) })}>
        {PERIODS.map(([label, d]) => (
          <option key={label} value={d ?? "all"}>
            {label}
          </option>
        ))}
      </select>
      <select id="bucket" aria-label="By" value={bucket} onChange={(e) => set({ bucket: e.target.value })}>
        <option value="day">By day</option>
        <option value="week">By week</option>
      </select>
      <select id="kind" aria-label="Type" value={kind} onChange={(e) => set({ kind: e.target.value })}>
        <option value="">All types</option>
        {kinds.map((k) => (
          <option key={k} value={k}>
            {KIND_WORDS[k]}s
          </option>
        ))}
      </select>
      <select id="client" aria-label="Written by" value={client} onChange={(e) => set({ client: e.target.value })}>
        <option value="">Written by anyone</option>
        {Object.keys(m.by_app)
          .concat(client && !(client in m.by_app) ? [client] : [])
          .filter((a) => a)
          .map((a) => (
            <option key={a} value={a}>
              {origin({ app: a })}
            </option>
          ))}
      </select>
      <select id="tag" aria-label="Tagged" value={tag} onChange={(e) => set({ tag: e.target.value })}>
        <option value="">Any tag</option>
        {m.tags
          .map(([t]) => t)
          .concat(tag && !m.tags.some(([t]) => t === tag) ? [tag] : [])
          .map((t) => (
            <option key={t} value={t}>
              Tagged {t}
            </option>
          ))}
      </select>
    </div>
  );
}

function percent(part: number, whole: number): string {
  return whole === 0 ? "–" : `${Math.round((100 * part) / whole)}%`;
}

// The headline numbers: memories, recalls, prompts, what the person said.
export function Cards({ data }: { data: DashboardView }) {
  const m = data.memory;
  const r = data.recalls;
  const u = data.utilization;
  const f = r.feedback;
  return (
    <div className="cards" id="cards">
      <div className="card" id="card-memories">
        <Headline n={m.memories} one="memory" many="memories" />
        <span className="muted">
          {m.expired.toLocaleString()} expired · {percent(m.embedded, m.memories)} searchable by meaning
        </span>
      </div>
      <div className="card" id="card-recalls">
        <Headline n={r.recalls} one="recall" many="recalls" />
        <span className="muted">
          {percent(r.found, r.recalls)} found something · 95% took {Math.max(1, Math.round(r.latency_p95_ms ?? 0))} ms or less
        </span>
      </div>
      <div className="card" id="card-prompts">
        <Headline n={u.prompts} one="prompt" many="prompts" />
        <span className="muted">
          {u.prompts === 0
            ? "none built in this period"
            : `${percent(Math.round(100 * (u.utilization ?? 0)), 100)} of the budget used on average`}
        </span>
      </div>
      <div className="card" id="card-feedback">
        <span>
          <strong>{(f.answers_helpful + f.memories_helpful).toLocaleString()}</strong> helpful ·{" "}
          <strong>{(f.answers_unhelpful + f.memories_unhelpful).toLocaleString()}</strong> not
        </span>
        <span className="muted">what you said of answers and memories</span>
      </div>
    </div>
  );
}

type Opener = (d: { what: DrillWhat; range: RangeForm; heading: string }) => void;

// The most recalled memories, those never recalled, and the searches that found nothing.
export function Lists({
  data,
  range,
  setDrill,
  onOpenMemory,
}: {
  data: DashboardView;
  range: RangeForm;
  setDrill: Opener;
  onOpenMemory: (id: string) => void;
}) {
  const r = data.recalls;
  return (
    <section className="panel" id="lists">
      <h3>Most recalled</h3>
      {data.top.length === 0 ? (
        <p className="muted">None yet.</p>
      ) : (
        <ol className="top" id="top">
          {data.top.map((t) => (
            <li key={t.memory.id}>
              <button className="link" onClick={() => onOpenMemory(t.memory.id)}>
                {title(t.memory)}
              </button>{" "}
              <span className="muted">{count(t.count, "time", "times")}</span>
            </li>
          ))}
        </ol>
      )}
      <p>
        <button
          className="link accent"
          id="never-recalled"
          onClick={() => setDrill({ what: { memories: "never_recalled" }, range, heading: "Memories never recalled" })}
        >
          {count(r.never_recalled, "memory was", "memories were")} never recalled
        </button>
      </p>
      <h3>Searches that found nothing</h3>
      {r.no_result.length === 0 ? (
        <p className="muted" id="no-result">
          {r.recalls === 0 ? "No search yet." : "None: every search found something."}
        </p>
      ) : (
        <ul className="no-result" id="no-result">
          {r.no_result.map(([q, n]) => (
            <li key={q}>
              <button
                className="link"
                onClick={() => setDrill({ what: { recalls: "query", query: q }, range, heading: `“${q}”` })}
              >
                {q}
              </button>{" "}
              <span className="muted">{count(n, "time", "times")}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

// How many concepts hold how many memories, and each grouping pass.
export function Concepts({ data }: { data: DashboardView }) {
  const m = data.memory;
  return (
    <section className="panel" id="compaction">
      <h3>Concepts</h3>
      <p>
        {m.concepts === 0
          ? "No concepts yet."
          : `${count(m.concepts, "concept holds", "concepts hold")} ${count(m.grouped, "memory", "memories")}.`}
      </p>
      {data.passes.length === 0 ? (
        <p className="muted">
          Related memories were not grouped in this period. Memories → Concepts → “Group related memories” does it, or “Group
          related memories” under Health below.
        </p>
      ) : (
        <div className="wide">
        <table className="passes" id="passes">
          <thead>
            <tr>
              <th>When</th>
              <th>Grouped</th>
              <th>New</th>
              <th>Changed</th>
              <th>Merged</th>
              <th>Broken up</th>
              <th>Joined</th>
              <th>Summaries shorter by</th>
            </tr>
          </thead>
          <tbody>
            {data.passes.map((p, i) => (
              <tr key={i}>
                <td>{when(p.at)}</td>
                <td>{p.full ? "everything" : "new memories"}</td>
                <td>{p.formed}</td>
                <td>{p.updated}</td>
                <td>{p.merged}</td>
                <td>{p.dissolved}</td>
                <td>{p.joined}</td>
                <td>{p.summary_tokens > 0 ? `${(p.member_tokens / p.summary_tokens).toFixed(1)}×` : "–"}</td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      )}
      {data.passes.length > 0 && (
        <p className="muted">
          Each time memories were grouped: concepts made, changed, merged into another or broken up, and memories that joined
          one. A summary is shorter than what its memories say by the factor on the right.
        </p>
      )}
    </section>
  );
}

// A headline number and its noun.
function Headline({ n, one, many }: { n: number; one: string; many: string }) {
  return (
    <span>
      <strong>{n.toLocaleString()}</strong> {n === 1 ? one : many}
    </span>
  );
}

// A chart's numbers, as a table a person (or a screen reader) can read; a count opens what is
// behind it, as a click on the chart does.
export function Numbers({
  head,
  rows,
  onCell,
}: {
  head: string[];
  rows: (string | number)[][];
  onCell?: (c: Clicked) => void;
}) {
  if (rows.length === 0) return null;
  return (
    <details className="numbers">
      <summary>Numbers</summary>
      <table>
        <thead>
          <tr>
            {head.map((h) => (
              <th key={h}>{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {r.map((c, j) => (
                <td key={j}>
                  {typeof c !== "number" ? (
                    c
                  ) : onCell && j > 0 && c > 0 ? (
                    <button className="link accent" onClick={() => onCell({ series: head[j], category: String(r[0]) })}>
                      {c.toLocaleString()}
                    </button>
                  ) : (
                    c.toLocaleString()
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
