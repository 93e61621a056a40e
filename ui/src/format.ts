import type { MemoryView_Serialize as MemoryView } from "./bindings";

// Importance in words; a stored value that is none of these is kept unless another is chosen.
export const IMPORTANCE: [number, string][] = [
  [0.25, "Low"],
  [0.5, "Normal"],
  [0.75, "High"],
  [1, "Essential"],
];

// "High (0.75)", or the number alone when it is none of the named levels.
/** A number with its noun: "1 memory", "2,999 memories". */
export function count(n: number, one: string, many: string): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

export function importanceWords(i: number | null): string {
  if (i === null) return "not set";
  const named = IMPORTANCE.find(([v]) => v === i);
  return named ? `${named[1]} (${i})` : String(i);
}

// The names of memory types and tiers, the same on every screen.
export const KIND_WORDS: Record<string, string> = { semantic: "Fact", episodic: "Episode", procedural: "Procedure" };
export const TIER_WORDS: Record<string, string> = { short: "Short-term", medium: "Medium-term", long: "Long-term" };

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

// The apps that write memories, in words.
const APPS: Record<string, string> = {
  desktop: "you, in this app",
  cli: "the strata command",
  api: "a program using Strata",
  import: "imported from a file",
  examples: "Strata's examples",
  mcp: "an AI tool over MCP",
  compaction: "Strata, grouping related memories",
};

// Where a memory came from, in words: who or what wrote it, and the model when a chat did.
export function origin(s: { app: string; provider?: string | null; model?: string | null }): string {
  const app = APPS[s.app] ?? (s.app.startsWith("mcp:") ? `${s.app.slice(4)}, over MCP` : s.app);
  return s.model ? `A conversation with ${s.model} (${app})` : app[0].toUpperCase() + app.slice(1);
}

// Who caused a change, where no app is named.
const ACTORS: Record<string, string> = {
  user: "A person",
  agent: "An AI agent",
  app: "Strata, recording a conversation",
  system: "Strata's upkeep",
};

// Who made a change in a memory's history, in words: the app that wrote it, else who caused it.
export function byWhom(e: { client?: string | null; actor: string }): string {
  return e.client ? origin({ app: e.client }) : (ACTORS[e.actor] ?? e.actor);
}

// Whether a memory is a concept: a group of related memories Strata formed (key `concept/…`).
export function isConcept(m: MemoryView): boolean {
  return m.type === "semantic" && m.key.startsWith("concept/");
}

// A memory's kind in a word: a concept is one, though stored as facts.
export function kindWord(m: MemoryView): string {
  return isConcept(m) ? "Concept" : KIND_WORDS[m.type];
}

// A time as its day: "8 May 2023".
export function day(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
}

// One line that says what a memory is about.
export function title(m: MemoryView): string {
  if (m.type === "semantic" && isConcept(m)) return `Concept: ${valueText(m.facts.name ?? m.key.slice("concept/".length))}`;
  switch (m.type) {
    case "semantic":
      return `${words(m.key)}: ${Object.entries(m.facts)
        .map(([k, v]) => `${words(k).toLowerCase()} ${valueText(v)}`)
        .join("; ")}`;
    case "episodic":
      return m.body.form === "utterance"
        ? `${m.body.speaker}: ${m.body.text}`
        : `Asked: ${m.body.query} — the assistant answered (it may be wrong): ${m.body.response}`;
    case "procedural":
      return `${words(m.name)} (${m.steps.length} steps)`;
  }
}

export function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

// A share as a percentage ("–" when there is none), and a figure that may be missing as 0.
export const pct = (x: number | null) => (x === null ? "–" : `${Math.round(x * 100)}%`);
export const num = (x: number | null) => x ?? 0;
