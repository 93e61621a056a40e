import type { DashboardView_Serialize as DashboardView } from "./bindings";
import { Chart, type Clicked } from "./Chart";
import { KIND_WORDS, count } from "./format";
import { KINDS, SECTION_WORDS, agentCharts, q, recallCharts, storeCharts } from "./AnalyticsCharts";
import { Numbers } from "./AnalyticsPanels";

// The Analytics screen's charts, each with its numbers below it: what the store holds and how
// it changed (StoreCharts), and how recall was used (UseCharts).

type Opener = (c: Clicked) => void;

// Memories added, and moves between tiers.
export function StoreCharts({
  data,
  dark,
  bucket,
  onCreated,
  onMoves,
}: {
  data: DashboardView;
  dark: boolean;
  bucket: string;
  onCreated: Opener;
  onMoves: Opener;
}) {
  const m = data.memory;
  const kinds = KINDS;
  const { created, moves } = storeCharts(data);
  const days = [...new Set([...m.created.map((c) => c.start), ...m.moves.map((c) => c.start)])].sort();
  return (
    <>
      <section className="panel" id="chart-created">
        <h3>Memories added</h3>
        {m.created.length === 0 ? (
          <p className="muted">No memory was added in this period.</p>
        ) : (
          <Chart option={created} dark={dark} label="Memories added per day, by type" onClick={onCreated} />
        )}
        <Numbers
          head={[bucket === "week" ? "Week from" : "Day", ...kinds.map((k) => KIND_WORDS[k] + "s"), "All"]}
          rows={m.created.map((c) => [c.start, ...kinds.map((k) => c.by_type[k] ?? 0), c.total])}
          onCell={onCreated}
        />
      </section>
      <section className="panel" id="chart-moves">
        <h3>Moves between tiers</h3>
        {m.moves.length === 0 ? (
          <p className="muted">No memory moved between tiers in this period.</p>
        ) : (
          <Chart option={moves} dark={dark} label="Tier moves per day" onClick={onMoves} />
        )}
        {m.reasons.length > 0 && (
          <p className="muted" id="reasons">
            Why: {m.reasons.map(([why, n]) => `${why} (${n})`).join("; ")}
          </p>
        )}
        <Numbers
          head={[bucket === "week" ? "Week from" : "Day", "Promoted", "Demoted", "Expired"]}
          rows={days.filter((d) => m.moves.some((x) => x.start === d)).map((d) => {
            const x = m.moves.find((y) => y.start === d)!;
            return [d, x.promoted, x.demoted, x.expired];
          })}
          onCell={onMoves}
        />
      </section>
    </>
  );
}

// How well recall matched, from recall to answer, and what prompts are made of.
export function UseCharts({ data, dark, bucket, onRecalls }: { data: DashboardView; dark: boolean; bucket: string; onRecalls: Opener }) {
  const r = data.recalls;
  const u = data.utilization;
  const { recalls, scored, scores, funnelSteps, funnel, sections, utilization } = recallCharts(data);
  return (
    <>
      <section className="panel" id="chart-recalls">
        <h3>Recalls</h3>
        {r.series.length === 0 ? (
          <p className="muted">Nothing was recalled in this period: recalls are recorded when you search or chat.</p>
        ) : (
          <Chart option={recalls} dark={dark} label="Recalls per day, and how many found something" onClick={onRecalls} />
        )}
        <Numbers
          head={[bucket === "week" ? "Week from" : "Day", "Recalls", "Found nothing"]}
          rows={r.series.map((p) => [p.start, p.recalls, p.recalls - p.found])}
          onCell={onRecalls}
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
          <Chart option={scores} dark={dark} label="How close in meaning the best result was to what was asked, per day" onClick={onRecalls} />
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
      <AgentsPanel data={data} dark={dark} bucket={bucket} />
    </>
  );
}

// What agents did: tasks per day, answered or not, and each agent's tasks, steps and tokens.
function AgentsPanel({ data, dark, bucket }: { data: DashboardView; dark: boolean; bucket: string }) {
  const a = data.agents;
  return (
    <section className="panel" id="chart-agents">
      <h3>Agents' tasks</h3>
      {a.runs === 0 ? (
        <p className="muted">No agent was given a task in this period.</p>
      ) : (
        <>
          <Chart option={agentCharts(data)} dark={dark} label="Tasks given to agents per day, answered or not" />
          <Numbers
            head={[bucket === "week" ? "Week from" : "Day", "Tasks", "Answered"]}
            rows={a.series.map((p) => [p.start, p.runs, p.answered])}
          />
          <div className="wide">
            <table id="agents-table">
              <thead>
                <tr>
                  {["Agent", "Tasks", "Answered", "Tools", "Failed", "Handoffs", "Tokens"].map((h) => (
                    <th key={h}>{h}</th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {a.by_agent.map((u) => (
                  <tr key={u.agent}>
                    {[u.agent, u.runs, u.answered, u.tool_calls, u.failed_tools, u.handoffs, u.tokens].map((c, i) => (
                      <td key={i}>{typeof c === "number" ? c.toLocaleString() : c}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
