import { type DatasetView, type RowsView } from "./bindings";
import { count } from "./format";

// A dataset's size in words: "48 rows, 5 columns", "3 pages, 3 passages".
export function sizeOf(d: DatasetView): string {
  if (d.table) return `${count(d.rows, "row", "rows")}, ${count(d.columns.length, "column", "columns")}`;
  const pages = d.sections.filter((s) => s.depth === 0 && s.page !== null).length;
  return `${pages > 0 ? `${count(pages, "page", "pages")}, ` : ""}${count(d.passages, "passage", "passages")}`;
}

// A table of rows as text, numbers to the right.
export function RowsTable({ view, first }: { view: RowsView; first?: number }) {
  return (
    <div className="rows-scroll">
      <table className="rows">
        <thead>
          <tr>
            {first !== undefined && <th className="row-number">#</th>}
            {view.columns.map((c) => (
              <th key={c}>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {view.rows.map((r, i) => (
            <tr key={i}>
              {first !== undefined && <td className="row-number">{first + i}</td>}
              {r.map((cell, j) => (
                <td key={j} className={view.numeric[j] ? "number" : ""}>
                  {cell}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
