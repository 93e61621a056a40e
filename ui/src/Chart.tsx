import { useEffect, useRef } from "react";
import * as echarts from "echarts/core";
import { BarChart, FunnelChart, LineChart } from "echarts/charts";
import { AriaComponent, GridComponent, LegendComponent, TooltipComponent } from "echarts/components";
import { CanvasRenderer } from "echarts/renderers";

// Apache ECharts, only the parts the analytics screen draws with (docs/ARCHITECTURE: why).
echarts.use([BarChart, LineChart, FunnelChart, GridComponent, TooltipComponent, LegendComponent, AriaComponent, CanvasRenderer]);

export type ChartOption = echarts.EChartsCoreOption;

// Series colours that read on the light and the dark theme alike, the app's teal first.
const PALETTE = ["#14a090", "#4e79a7", "#f28e2b", "#9aa4b2"];

// A point a person clicked: the series and the category (a bucket's day, a section's name).
export type Clicked = { series: string; category: string };

// One chart: drawn on a canvas in the theme's colours, redrawn when its option changes, with a
// description screen readers read (ECharts' aria) and a click on a point reported.
export function Chart({
  option,
  dark,
  label,
  onClick,
  height = 220,
}: {
  option: ChartOption;
  dark: boolean;
  label: string;
  onClick?: (c: Clicked) => void;
  height?: number;
}) {
  const el = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);
  const click = useRef(onClick);
  click.current = onClick;

  useEffect(() => {
    if (!el.current) return;
    const c = echarts.init(el.current, dark ? "dark" : undefined, { renderer: "canvas" });
    c.on("click", (p: { seriesName?: string; name?: string }) =>
      click.current?.({ series: p.seriesName ?? "", category: p.name ?? "" }),
    );
    chart.current = c;
    const resize = new ResizeObserver(() => c.resize());
    resize.observe(el.current);
    return () => {
      resize.disconnect();
      c.dispose();
      chart.current = null;
    };
  }, [dark]);

  useEffect(() => {
    chart.current?.setOption(
      { backgroundColor: "transparent", color: PALETTE, aria: { enabled: true }, animation: false, ...option },
      { notMerge: true },
    );
  }, [option, dark]);

  return <div className="chart" ref={el} style={{ height }} role="img" aria-label={label} />;
}
