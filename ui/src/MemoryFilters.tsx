import { useState } from "react";
import type { FilterForm } from "./bindings";

// What the memory list is narrowed to, and its order when nothing is searched (when added,
// when it happened, last recalled). Each is what its field holds, "" for none.
export type Filters = {
  type: string;
  tier: string;
  origin: string;
  order: string;
  tag: string;
  agent: string;
  session: string;
  since: string;
  until: string;
};

const NONE: Filters = { type: "", tier: "", origin: "", order: "added", tag: "", agent: "", session: "", since: "", until: "" };

// The filters' state, and a setter per field.
export function useFilters() {
  const [filters, setFilters] = useState<Filters>(NONE);
  const set = (field: keyof Filters) => (value: string) => setFilters((old) => ({ ...old, [field]: value }));
  return { filters, set };
}

// The filters as the engine reads them.
export function filterForm(f: Filters): FilterForm {
  return {
    types: f.type ? [f.type] : [],
    tiers: f.tier ? [f.tier] : [],
    tags: f.tag.trim() ? [f.tag.trim()] : [],
    since: f.since.trim() || null,
    until: f.until.trim() || null,
    agent: f.agent.trim() || null,
    session: f.session.trim() || null,
    origin: f.origin || null,
  };
}

// Whether anything narrows the list (the order does not).
export function narrowed(f: Filters): boolean {
  return !!(f.type || f.tier || f.tag || f.agent || f.session || f.since || f.until || f.origin);
}

type Props = { filters: Filters; set: (field: keyof Filters) => (value: string) => void; searching: boolean };

// The filters above the list: type, tier, tag, where from and the order, then scope and dates
// folded away.
export function FilterBar({ filters: f, set, searching }: Props) {
  return (
    <>
      <div className="filters">
        <select id="filter-type" value={f.type} onChange={(e) => set("type")(e.target.value)} aria-label="Type">
          <option value="">Any type</option>
          <option value="semantic">Facts</option>
          <option value="episodic">Episodes</option>
          <option value="procedural">Procedures</option>
        </select>
        <select id="filter-tier" value={f.tier} onChange={(e) => set("tier")(e.target.value)} aria-label="Tier">
          <option value="">Any tier</option>
          <option value="short">Short-term</option>
          <option value="medium">Medium-term</option>
          <option value="long">Long-term</option>
        </select>
        <input id="filter-tag" value={f.tag} onChange={(e) => set("tag")(e.target.value)} placeholder="Tag" aria-label="Tag" />
        <select id="filter-origin" value={f.origin} onChange={(e) => set("origin")(e.target.value)} aria-label="Where from">
          <option value="">From anywhere</option>
          <option value="person">Written by you</option>
          <option value="imported">Imported</option>
          <option value="conversation">From conversations</option>
          <option value="tool">Added by AI tools</option>
        </select>
        <select
          id="order"
          value={f.order}
          onChange={(e) => set("order")(e.target.value)}
          aria-label="Order"
          disabled={searching}
          title={searching ? "Search results are in order of how well they match" : undefined}
        >
          <option value="added">Newest added first</option>
          <option value="occurred">Latest to happen first</option>
          <option value="recalled">Last recalled first</option>
        </select>
      </div>
      <details className="filters more-filters">
        <summary>Scope and dates</summary>
        <input id="filter-agent" value={f.agent} onChange={(e) => set("agent")(e.target.value)} placeholder="Agent (its private memories)" aria-label="Agent" />
        <input id="filter-session" value={f.session} onChange={(e) => set("session")(e.target.value)} placeholder="Session" aria-label="Session" />
        <label>
          From <input id="filter-since" value={f.since} onChange={(e) => set("since")(e.target.value)} placeholder="2025-05-01, last Saturday…" />
        </label>
        <label>
          to <input id="filter-until" value={f.until} onChange={(e) => set("until")(e.target.value)} placeholder="yesterday, in May 2023…" />
        </label>
      </details>
    </>
  );
}
