import { useEffect, useMemo, useState } from "react";
import { AdapterUse } from "./AnalyticsAdapters";
import { commands, type DashboardView_Serialize as DashboardView, type RangeForm } from "./bindings";
import type { Clicked } from "./Chart";
import { Drill, type DrillWhat } from "./Drill";
import { answered } from "./loaded";
import { KIND_WORDS } from "./format";
import { Health } from "./Health";
import { KINDS } from "./AnalyticsCharts";
import { Cards, Concepts, Filters, Lists, type Narrowed } from "./AnalyticsPanels";
import { StoreCharts, UseCharts } from "./AnalyticsSections";

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

// The analytics screen: what the store holds and how it changed, what recall found and what
// prompts did with it, the store's health and what mends it. Every chart has its numbers
// below it, and a click on a point lists what is behind it.
export function Analytics({ active, dark, onOpenMemory }: { active: boolean; dark: boolean; onOpenMemory: (id: string) => void }) {
  const [narrowed, setNarrowed] = useState<Narrowed>({ days: 30, bucket: "day", kind: "", client: "", tag: "" });
  const { days, bucket, kind, client, tag } = narrowed;
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
    answered(
      commands.dashboard(range),
      (d) => {
        setData(d);
        setError(null);
      },
      setError,
    );
  useEffect(() => {
    if (active) load();
  }, [active, range]);

  // The range of one bucket, for what is behind a point.
  const bucketRange = (start: string): RangeForm => ({ ...range, since: start, until: plusDays(start, bucket === "week" ? 6 : 0) });
  const per = bucket === "week" ? "the week from" : "";

  if (!data) return <div className="empty">{error ?? "Loading…"}</div>;
  const kinds = KINDS;

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

  return (
    <div className="analytics">
      <h2>Analytics</h2>
      <Filters data={data} value={narrowed} onChange={setNarrowed} />
      {error && <div className="error">{error}</div>}

      <Cards data={data} />

      <div className="charts">
        <StoreCharts data={data} dark={dark} bucket={bucket} onCreated={openCreated} onMoves={openMoves} />
        <UseCharts data={data} dark={dark} bucket={bucket} onRecalls={openRecalls} />
        <Lists data={data} range={range} setDrill={setDrill} onOpenMemory={onOpenMemory} />
        <Concepts data={data} />
        <AdapterUse active={active} dark={dark} />
      </div>

      {drill && <Drill key={JSON.stringify(drill)} {...drill} onOpenMemory={onOpenMemory} onClose={() => setDrill(null)} />}

      <Health active={active} onOpenMemory={onOpenMemory} onChanged={load} />
    </div>
  );
}
