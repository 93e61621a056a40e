import { useEffect, useRef, useState, type ReactNode } from "react";

const OVERSCAN = 8;

// A list that renders only the rows in view (fixed row height), so 100,000 memories scroll as
// smoothly as 100; `onEnd` asks for the next page when the last rows come near.
export function VirtualList<T>({
  items,
  rowHeight,
  render,
  onEnd,
  id,
}: {
  items: T[];
  rowHeight: number;
  render: (item: T, index: number) => ReactNode;
  onEnd?: () => void;
  id?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [height, setHeight] = useState(600);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setHeight(el.clientHeight || 600);
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const first = Math.max(0, Math.floor(top / rowHeight) - OVERSCAN);
  const last = Math.min(items.length, Math.ceil((top + height) / rowHeight) + OVERSCAN);

  // Asked again whenever the rows change (a reload of the same length too) or `onEnd` does.
  useEffect(() => {
    if (onEnd && items.length > 0 && last >= items.length - OVERSCAN) onEnd();
  }, [last, items, onEnd]);

  // A new list (a search, a filter) starts at the top.
  const firstItem = items[0];
  useEffect(() => {
    if (box.current) box.current.scrollTop = 0;
    setTop(0);
  }, [firstItem]);

  return (
    <div className="virtual" ref={box} id={id} onScroll={(e) => setTop(e.currentTarget.scrollTop)}>
      <ul style={{ height: items.length * rowHeight }}>
        {items.slice(first, last).map((item, i) => (
          <li key={first + i} style={{ top: (first + i) * rowHeight, height: rowHeight }} data-index={first + i}>
            {render(item, first + i)}
          </li>
        ))}
      </ul>
    </div>
  );
}
