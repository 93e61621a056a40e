import type { MemoryView_Serialize as MemoryView } from "./bindings";

// One line that says what a memory is about.
export function title(m: MemoryView): string {
  switch (m.type) {
    case "semantic":
      return `${m.key}: ${Object.entries(m.facts)
        .map(([k, v]) => `${k} ${typeof v === "string" ? v : JSON.stringify(v)}`)
        .join("; ")}`;
    case "episodic":
      return m.body.form === "utterance" ? `${m.body.speaker}: ${m.body.text}` : `${m.body.query} → ${m.body.response}`;
    case "procedural":
      return `${m.name} (${m.steps.length} steps)`;
  }
}

export function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}
