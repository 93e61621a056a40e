import { useEffect, useMemo, useState } from "react";
import { commands, type AdapterView_Serialize as AdapterView } from "./bindings";
import { answered } from "./loaded";
import { Chart, type ChartOption } from "./Chart";

// Analytics' view of what the model learned: how many questions each trained adapter
// answered, day by day, and what people said of those answers.
export function AdapterUse({ active, dark }: { active: boolean; dark: boolean }) {
  const [all, setAll] = useState<AdapterView[] | null>(null);
  useEffect(() => {
    if (active) answered(commands.adapters(), setAll);
  }, [active]);
  const used = (all ?? []).filter((a) => a.answered > 0);
  const days = useMemo(() => [...new Set(used.flatMap((a) => a.days.map((d) => d.day)))].sort(), [all]);
  const option: ChartOption = useMemo(
    () => ({
      grid: { left: 44, right: 12, top: 28, bottom: 28 },
      tooltip: { trigger: "axis" },
      legend: { top: 0 },
      xAxis: { type: "category", data: days },
      yAxis: { type: "value", minInterval: 1, name: "answers" },
      series: used.map((a) => ({
        name: a.id,
        type: "bar",
        stack: "answers",
        data: days.map((day) => a.days.find((d) => d.day === day)?.answered ?? 0),
      })),
    }),
    [all],
  );
  return (
    <section className="panel" id="chart-adapters">
      <h3>What the model learned, in use</h3>
      {used.length === 0 ? (
        <p className="muted">No trained adapter has answered a question yet (Training teaches the model your facts).</p>
      ) : (
        <>
          <Chart option={option} dark={dark} label="Questions each adapter answered, per day" />
          <table className="numbers">
            <thead>
              <tr>
                <th>Adapter</th>
                <th>Status</th>
                <th>Answered</th>
                <th>Helpful</th>
                <th>Wrong</th>
              </tr>
            </thead>
            <tbody>
              {used.map((a) => (
                <tr key={a.id}>
                  <td>{a.id}</td>
                  <td>{a.status === "active" ? "In use" : a.status === "retired" ? "Retired" : "Not in use"}</td>
                  <td>{a.answered}</td>
                  <td>{a.days.reduce((n, d) => n + d.helpful, 0)}</td>
                  <td>{a.days.reduce((n, d) => n + d.wrong, 0)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
