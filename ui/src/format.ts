import type { MemoryView_Serialize as MemoryView } from "./bindings";

// A key as words: "user_preferences" → "User preferences".
export function words(key: string): string {
  const s = key.replace(/_/g, " ").trim();
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

// A fact's value as a person writes it: a list with commas, yes or no, a group in brackets.
export function valueText(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (Array.isArray(v)) return v.map(valueText).join(", ");
  if (v && typeof v === "object")
    return `(${Object.entries(v)
      .map(([k, x]) => `${words(k).toLowerCase()}: ${valueText(x)}`)
      .join("; ")})`;
  return String(v);
}

// One line that says what a memory is about.
export function title(m: MemoryView): string {
  switch (m.type) {
    case "semantic":
      return `${words(m.key)}: ${Object.entries(m.facts)
        .map(([k, v]) => `${words(k).toLowerCase()} ${valueText(v)}`)
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
