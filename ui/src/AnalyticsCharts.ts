import type { DashboardView_Serialize as DashboardView } from "./bindings";
import type { ChartOption } from "./Chart";
import { KIND_WORDS } from "./format";

// The Analytics screen's charts, as ECharts options made from the dashboard's numbers.

export const KINDS = ["semantic", "episodic", "procedural"];

export const SECTION_WORDS: Record<string, string> = {
  system: "Instructions",
  facts: "Facts",
  episodes: "Past conversations",
  procedures: "Procedures",
  history: "This conversation",
  message: "The question",
  framing: "Labels and framing",
  concepts: "Concepts",
};

export const q = (x: number | null | undefined) => x ?? 0;

// Every chart of the dashboard, and what they are drawn from.
// What the store holds and how it changed: memories added, moves between tiers.
export function storeCharts(data: DashboardView) {
  const m = data.memory;
  const kinds = KINDS;
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
  return { created, moves };
}

// What agents did: tasks per day, answered or not.
export function agentCharts(data: DashboardView) {
  const a = data.agents;
  return bars(
    a.series.map((p) => p.start),
    [
      { name: "Answered", data: a.series.map((p) => p.answered) },
      { name: "Not answered", data: a.series.map((p) => p.runs - p.answered) },
    ],
    "tasks",
  );
}

// How recall was used: recalls, how well they matched, recall to answer, prompts' make-up.
export function recallCharts(data: DashboardView) {
  const r = data.recalls;
  const u = data.utilization;
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
  return { recalls, scored, scores, funnelSteps, funnel, sections, utilization };
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
