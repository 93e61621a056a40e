import { useEffect, useMemo, useState } from "react";
import { commands, type DashboardView_Serialize as DashboardView, type RangeForm } from "./bindings";
import { Chart, type ChartOption, type Clicked } from "./Chart";
import { Drill, type DrillWhat } from "./Drill";
import { describe } from "./errors";
import { KIND_WORDS, count, origin, title, when } from "./format";
import { Health } from "./Health";

// The periods a person picks from, in days (none: all time).
const PERIODS: [string, number | null][] = [
  ["Last 7 days", 7],
  ["Last 30 days", 30],
  ["Last 90 days", 90],
  ["All time", null],
];

const SECTION_WORDS: Record<string, string> = {
  system: "Instructions",
  facts: "Facts",
  episodes: "Past conversations",
  procedures: "Procedures",
  history: "This conversation",
  message: "The question",
  framing: "Labels and framing",
  concepts: "Concepts",
};

// A date as the engine reads it: YYYY-MM-DD (UTC).
function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

// The day `n` days after an ISO day.
function plusDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return isoDay(d);
}

function percent(part: number, whole: number): string {
  return whole === 0 ? "–" : `${Math.round((100 * part) / whole)}%`;
}

// The analytics screen: what the store holds and how it changed, what recall found and what
// prompts did with it, the store's health and what mends it. Every chart has its numbers
// below it, and a click on a point lists what is behind it.
export function Analytics({ active, dark, onOpenMemory }: { active: boolean; dark: boolean; onOpenMemory: (id: string) => void }) {
  const [days, setDays] = useState<number | null>(30);
  const [bucket, setBucket] = useState("day");
  const [kind, setKind] = useState("");
  const [client, setClient] = useState("");
  const [tag, setTag] = useState("");
  const [data, setData] = useState<DashboardView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [drill, setDrill] = useState<{ what: DrillWhat; range: RangeForm; heading: string } | null>(null);

  const range: RangeForm = useMemo(
    () => ({
      since: days === null ? null : isoDay(new Date(Date.now() - (days - 1) * 86_400_000)),
      until: null,
      bucket,
      kind: kind || null,
      client: client || null,
      tag: tag || null,
    }),
    [days, bucket, kind, client, tag],
  );

  const load = () =>
    commands.dashboard(range).then((r) => {
      if (r.status === "ok") {
        setData(r.data);
        setError(null);
      } else setError(describe(r.error));
    });
  useEffect(() => {
    if (active) load();
  }, [active, range]);

  // The range of one bucket, for what is behind a point.
  const bucketRange = (start: string): RangeForm => ({ ...range, since: start, until: plusDays(start, bucket === "week" ? 6 : 0) });
  const per = bucket === "week" ? "the week from" : "";

  if (!data) return <div className="empty">{error ?? "Loading…"}</div>;
  const m = data.memory;
  const r = data.recalls;
  const u = data.utilization;
  const days_ = [...new Set([...m.created.map((c) => c.start), ...m.moves.map((c) => c.start)])].sort();
  const kinds = ["semantic", "episodic", "procedural"];

  const created = bars(
    m.created.map((c) => c.start),
    kinds.map((k) => ({ name: KIND_WORDS[k] + "s", data: m.created.map((c) => c.by_type[k] ?? 0) })),
    "created",
  );
  const moves = bars(
    m.moves.map((c) => c.start),
    [
      { name: "Promoted", data: m.moves.map((c) => c.promoted) },
      { name: "Demoted", data: m.moves.map((c) => c.demoted) },
      { name: "Expired", data: m.moves.map((c) => c.expired) },
    ],
  );
  const recalls = bars(
    r.series.map((p) => p.start),
    [
      { name: "Found something", data: r.series.map((p) => p.found) },
      { name: "Found nothing", data: r.series.map((p) => p.recalls - p.found) },
    ],
    "recalls",
  );
  // How close in meaning the best result was, per bucket: typical, low and high.
  const scored = r.series.filter((p) => p.similarity !== null);
  const q = (x: number | null | undefined) => x ?? 0;
  const scores: ChartOption = {
    tooltip: { trigger: "axis", valueFormatter: (v: number) => (v ?? 0).toFixed(2) },
    legend: { top: 0 },
    grid: { left: 40, right: 16, top: 32, bottom: 24 },
    xAxis: { type: "category", data: scored.map((p) => p.start) },
    yAxis: { type: "value", min: 0, max: 1 },
    series: [
      { name: "Typical", type: "line", data: scored.map((p) => q(p.similarity!.median)) },
      { name: "Low (a quarter below)", type: "line", lineStyle: { type: "dashed" }, data: scored.map((p) => q(p.similarity!.low)) },
      { name: "High (a quarter above)", type: "line", lineStyle: { type: "dashed" }, data: scored.map((p) => q(p.similarity!.high)) },
    ],
  };
  const funnelSteps: [string, number][] = [
    ["Recalled", r.recalled],
    ["Put in a prompt", r.in_prompt],
    ["Drawn on by an answer", r.used],
  ];
  const funnel: ChartOption = {
    tooltip: { trigger: "item", formatter: "{b}: {c} memories" },
    series: [
      {
        name: "Memories",
        type: "funnel",
        sort: "none",
        left: 8,
        width: "55%",
        top: 8,
        bottom: 8,
        minSize: "8%",
        label: { formatter: "{b}: {c}" },
        data: funnelSteps.map(([name, value]) => ({ name, value })),
      },
    ],
  };
  const sections = Object.entries(u.sections).filter(([, t]) => (t ?? 0) > 0);
  const utilization: ChartOption = {
    tooltip: { trigger: "axis", valueFormatter: (v: number) => `${Math.round(v)} tokens` },
    grid: { left: 130, right: 24, top: 8, bottom: 24 },
    xAxis: { type: "value" },
    yAxis: { type: "category", data: sections.map(([s]) => SECTION_WORDS[s] ?? s) },
    series: [{ name: "Tokens per prompt", type: "bar", data: sections.map(([, t]) => Math.round(t ?? 0)) }],
  };

  const openCreated = (c: Clicked) => {
    const k = kinds.find((x) => KIND_WORDS[x] + "s" === c.series);
    setDrill({
      what: { memories: "created" },
      range: { ...bucketRange(c.category), kind: k ?? range.kind },
      heading: `${k ? c.series : "Memories"} added ${per} ${c.category}`.replace("  ", " "),
    });
  };
  const openMoves = (c: Clicked) =>
    setDrill({
      what: { memories: c.series.toLowerCase() as "promoted" | "demoted" | "expired" },
      range: bucketRange(c.category),
      heading: `${c.series} ${per} ${c.category}`.replace("  ", " "),
    });
  const openRecalls = (c: Clicked) =>
    setDrill({
      what: { recalls: c.series === "Found nothing" ? "empty" : "all" },
      range: bucketRange(c.category),
      heading: `${c.series === "Found nothing" ? "Searches that found nothing" : "Recalls"} ${per} ${c.category}`.replace("  ", " "),
    });

  const f = r.feedback;
  return (
    <div className="analytics">
      <h2>Analytics</h2>
      <div className="filters" id="analytics-filters">
        <select id="period" aria-label="Period" value={days ?? "all"} onChange={(e) => setDays(e.target.value === "all" ? null : Number(e.target.value))}>
          {PERIODS.map(([label, d]) => (
            <option key={label} value={d ?? "all"}>
              {label}
            </option>
          ))}
        </select>
        <select id="bucket" aria-label="By" value={bucket} onChange={(e) => setBucket(e.target.value)}>
          <option value="day">By day</option>
          <option value="week">By week</option>
        </select>
        <select id="kind" aria-label="Type" value={kind} onChange={(e) => setKind(e.target.value)}>
          <option value="">All types</option>
          {kinds.map((k) => (
            <option key={k} value={k}>
              {KIND_WORDS[k]}s
            </option>
          ))}
        </select>
        <select id="client" aria-label="Written by" value={client} onChange={(e) => setClient(e.target.value)}>
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
        <select id="tag" aria-label="Tagged" value={tag} onChange={(e) => setTag(e.target.value)}>
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
      {error && <div className="error">{error}</div>}

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

      <div className="charts">
        <section className="panel" id="chart-created">
          <h3>Memories added</h3>
          {m.created.length === 0 ? (
            <p className="muted">No memory was added in this period.</p>
          ) : (
            <Chart option={created} dark={dark} label="Memories added per day, by type" onClick={openCreated} />
          )}
          <Numbers
            head={[bucket === "week" ? "Week from" : "Day", ...kinds.map((k) => KIND_WORDS[k] + "s"), "All"]}
            rows={m.created.map((c) => [c.start, ...kinds.map((k) => c.by_type[k] ?? 0), c.total])}
            onCell={openCreated}
          />
        </section>
        <section className="panel" id="chart-moves">
          <h3>Moves between tiers</h3>
          {m.moves.length === 0 ? (
            <p className="muted">No memory moved between tiers in this period.</p>
          ) : (
            <Chart option={moves} dark={dark} label="Tier moves per day" onClick={openMoves} />
          )}
          {m.reasons.length > 0 && (
            <p className="muted" id="reasons">
              Why: {m.reasons.map(([why, n]) => `${why} (${n})`).join("; ")}
            </p>
          )}
          <Numbers
            head={[bucket === "week" ? "Week from" : "Day", "Promoted", "Demoted", "Expired"]}
            rows={days_.filter((d) => m.moves.some((x) => x.start === d)).map((d) => {
              const x = m.moves.find((y) => y.start === d)!;
              return [d, x.promoted, x.demoted, x.expired];
            })}
            onCell={openMoves}
          />
        </section>
        <section className="panel" id="chart-recalls">
          <h3>Recalls</h3>
          {r.series.length === 0 ? (
            <p className="muted">Nothing was recalled in this period: recalls are recorded when you search or chat.</p>
          ) : (
            <Chart option={recalls} dark={dark} label="Recalls per day, and how many found something" onClick={openRecalls} />
          )}
          <Numbers
            head={[bucket === "week" ? "Week from" : "Day", "Recalls", "Found nothing"]}
            rows={r.series.map((p) => [p.start, p.recalls, p.recalls - p.found])}
            onCell={openRecalls}
          />
        </section>
        <section className="panel" id="chart-scores">
          <h3>How well recall matched</h3>
          {scored.length === 0 ? (
            <p className="muted">
              {r.found === 0
                ? "No recall in this period found something."
                : "No recall in this period was matched by meaning: the embedding model was not loaded when they ran."}
            </p>
          ) : (
            <Chart option={scores} dark={dark} label="How close in meaning the best result was to what was asked, per day" onClick={openRecalls} />
          )}
          <p className="muted">
            How close in meaning the best result was to what was asked, from 0 (unrelated) to 1 (the same meaning). Half of the
            recalls lie between the low and the high line; a falling line means recall finds less of what is asked.
          </p>
          <Numbers
            head={[bucket === "week" ? "Week from" : "Day", "Typical", "Low", "High", "Best score"]}
            rows={r.series
              .filter((p) => p.score !== null)
              .map((p) => [
                p.start,
                p.similarity ? q(p.similarity.median).toFixed(2) : "—",
                p.similarity ? q(p.similarity.low).toFixed(2) : "—",
                p.similarity ? q(p.similarity.high).toFixed(2) : "—",
                q(p.score).toFixed(2),
              ])}
          />
        </section>
        <section className="panel" id="chart-funnel">
          <h3>From recall to answer</h3>
          {r.recalled === 0 ? (
            <p className="muted">No memory was recalled in this period.</p>
          ) : (
            <Chart option={funnel} dark={dark} label="Memories recalled, put in a prompt, and drawn on by an answer" height={180} />
          )}
          <p className="muted">
            An answer draws on a memory when it repeats two of the memory's distinctive words. {count(r.answered, "answer", "answers")}{" "}
            checked.
          </p>
          <Numbers head={["Step", "Memories"]} rows={funnelSteps} />
        </section>
        <section className="panel" id="chart-utilization">
          <h3>What prompts are made of</h3>
          {u.prompts === 0 ? (
            <p className="muted">No prompt was built in this period.</p>
          ) : (
            <Chart option={utilization} dark={dark} label="Tokens per prompt by section" height={40 + 26 * sections.length} />
          )}
          {Object.keys(u.dropped).length > 0 && (
            <p className="muted">
              Left out:{" "}
              {Object.entries(u.dropped)
                .map(([why, n]) => `${n} ${why.replace(/_/g, " ")}`)
                .join(", ")}
            </p>
          )}
          <Numbers head={["Section", "Tokens per prompt"]} rows={sections.map(([s, t]) => [SECTION_WORDS[s] ?? s, Math.round(t ?? 0)])} />
        </section>
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
      </div>

      {drill && <Drill key={JSON.stringify(drill)} {...drill} onOpenMemory={onOpenMemory} onClose={() => setDrill(null)} />}

      <Health active={active} onOpenMemory={onOpenMemory} onChanged={load} />
    </div>
  );
}

// Bars per bucket, a series each (stacked when `stack` names a stack).
function bars(buckets: string[], series: { name: string; data: number[] }[], stack?: string): ChartOption {
  return {
    tooltip: { trigger: "axis" },
    legend: { top: 0 },
    grid: { left: 40, right: 16, top: 32, bottom: 24 },
    xAxis: { type: "category", data: buckets },
    yAxis: { type: "value", minInterval: 1 },
    series: series.map((x) => ({ ...x, type: "bar", stack })),
  };
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
function Numbers({
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
