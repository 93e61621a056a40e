import { useEffect, useState } from "react";
import {
  commands,
  type ContradictionView_Serialize as ContradictionView,
  type HealthCounts_Serialize as HealthCounts,
  type HealthView_Serialize as HealthView,
  type Optimization,
  type OptimizeView_Serialize as OptimizeView,
} from "./bindings";
import { answered, failed } from "./loaded";
import { count, title } from "./format";
import { JobBar, useJob } from "./jobs";

// Bytes as a person reads them.
function size(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(1)} GB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MB`;
  if (n >= 1 << 10) return `${Math.round(n / 1024)} KB`;
  return `${n} bytes`;
}

const ACTION_WORDS: Record<Optimization, string> = {
  merge_duplicates: "Merge near-duplicates",
  expire_stale: "Expire stale memories",
  embed_missing: "Make every memory searchable by meaning",
  compact: "Group related memories",
  vacuum: "Give back unused space",
};

const HEALTH_WORDS =
  "What is wrong with your memory, and how to fix it. Each fix shows what it would change first. Nothing is deleted: an " +
  "expired memory is kept, hidden from recall, and comes back with “Bring it back” on its page.";

// How many memories cannot be found by meaning, in words.
function unembeddedWords(n: number | null | undefined): string {
  if (n === null || n === undefined) return "Unknown: the on-device model is not loaded.";
  return n === 0 ? "None: every memory can be found by meaning." : `${count(n, "memory has", "memories have")} no vector yet.`;
}

// What changed between two health counts, in words.
function changed(before: HealthCounts, after: HealthCounts): string {
  const parts = [
    before.memories !== after.memories && `memories in use ${before.memories.toLocaleString()} → ${after.memories.toLocaleString()}`,
    before.duplicates !== after.duplicates && `near-duplicates ${before.duplicates} → ${after.duplicates}`,
    before.stale !== after.stale && `stale ${before.stale} → ${after.stale}`,
    before.unembedded !== after.unembedded && `without a vector ${before.unembedded ?? "?"} → ${after.unembedded ?? "?"}`,
    before.file_bytes !== after.file_bytes && `file ${size(before.file_bytes ?? 0)} → ${size(after.file_bytes ?? 0)}`,
  ].filter(Boolean);
  return parts.length ? `Now: ${parts.join("; ")}.` : "The numbers are as before.";
}

// The store's health — near-duplicates, facts that disagree, stale memories, memories without
// a vector, space — and what mends each: previewed first (nothing changes), then applied.
export function Health({ active, onOpenMemory, onChanged }: { active: boolean; onOpenMemory: (id: string) => void; onChanged: () => void }) {
  const [health, setHealth] = useState<HealthView | null>(null);
  const [preview, setPreview] = useState<OptimizeView | null>(null);
  const [done, setDone] = useState<OptimizeView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const job = useJob();

  const load = () => answered(commands.health(), setHealth, setError);
  useEffect(() => {
    if (active) load();
  }, [active]);

  const run = async (action: Optimization, apply: boolean) => {
    setError(null);
    setDone(null);
    const what = apply ? ACTION_WORDS[action] : `Working out what “${ACTION_WORDS[action].toLowerCase()}” would change`;
    const r = await job.run(what, (id, ch) => commands.optimize(id, action, apply, ch));
    if (failed(r, setError)) return;
    if (apply) {
      await load();
      setPreview(null);
      setDone(r.data);
      onChanged();
    } else setPreview(r.data);
  };

  if (!health) return <section className="panel health">{error ?? "Checking the store's health…"}</section>;
  const c = health.counts;
  const busy = job.running;
  const action = (a: Optimization, enabled: boolean) => (
    <button id={`preview-${a}`} disabled={busy || !enabled} onClick={() => run(a, false)}>
      Preview
    </button>
  );
  return (
    <section className="panel health" id="health">
      <h3>Health</h3>
      <p className="muted">{HEALTH_WORDS}</p>
      {error && <div className="error">{error}</div>}
      <table className="health-table">
        <tbody>
          <tr id="health-duplicates">
            <th>Near-duplicates</th>
            <td>
              {c.duplicate_groups === 0
                ? "None."
                : `${count(c.duplicate_groups, "group", "groups")} of memories that say almost the same thing: merging keeps one of each and expires ${count(c.duplicates, "other", "others")}.`}
            </td>
            <td>{action("merge_duplicates", c.duplicates > 0)}</td>
          </tr>
          <tr id="health-contradictions">
            <th>Facts that disagree</th>
            <td>
              <Contradictions list={health.contradictions} onOpen={onOpenMemory} />
            </td>
            <td />
          </tr>
          <tr id="health-stale">
            <th>Stale</th>
            <td>
              {c.stale === 0
                ? `None: every memory older than ${health.stale_days} days has been used.`
                : `${count(c.stale, "memory has", "memories have")} never been used in ${health.stale_days} days.`}
            </td>
            <td>{action("expire_stale", c.stale > 0)}</td>
          </tr>
          <tr id="health-unembedded">
            <th>Not searchable by meaning</th>
            <td>
              {unembeddedWords(c.unembedded)}
            </td>
            <td>{action("embed_missing", (c.unembedded ?? 0) > 0)}</td>
          </tr>
          <tr id="health-compact">
            <th>Related memories</th>
            <td>Grouping related memories into concepts gives prompts shorter summaries to use.</td>
            <td>{action("compact", c.unembedded != null)}</td>
          </tr>
          <tr id="health-space">
            <th>Space</th>
            <td>
              The file takes {size(c.file_bytes ?? 0)}
              {(c.free_bytes ?? 0) > 0 ? `, of which ${size(c.free_bytes ?? 0)} is unused and can be given back.` : "."}
            </td>
            <td>{action("vacuum", (c.free_bytes ?? 0) > 0)}</td>
          </tr>
        </tbody>
      </table>
      <JobBar job={job} />
      {preview && <Preview preview={preview} busy={busy} onApply={() => run(preview.action, true)} onCancel={() => setPreview(null)} onOpen={onOpenMemory} />}
      {done && done.after && (
        <div className="notice" id="optimized" role="status">
          Done: {done.summary}. {changed(done.before, done.after)}
        </div>
      )}
    </section>
  );
}

// Facts that disagree: each key with its values, each value opening the memory that says it.
function Contradictions({ list, onOpen }: { list: ContradictionView[]; onOpen: (id: string) => void }) {
  if (list.length === 0) return <>None.</>;
  return (
    <>
      {list.map((x) => (
        <div key={x.key + x.fact}>
          {x.key} — {x.fact}:{" "}
          {x.claims.map((cl, i) => (
            <span key={cl.memory.id}>
              {i > 0 && " or "}
              <button className="link accent" onClick={() => onOpen(cl.memory.id)}>
                {cl.value}
              </button>
            </span>
          ))}
        </div>
      ))}
    </>
  );
}

type PreviewProps = { preview: OptimizeView; busy: boolean; onApply: () => void; onCancel: () => void; onOpen: (id: string) => void };

// What a fix would change, before it is applied.
function Preview({ preview, busy, onApply, onCancel, onOpen }: PreviewProps) {
  return (
    <div className="preview" id="preview" role="status">
      <h4>{ACTION_WORDS[preview.action]}: what would change</h4>
      <p id="preview-summary">{preview.summary}.</p>
      <ul>
        {preview.changes.map((ch, i) => (
          <li key={i}>
            {ch.memory ? (
              <button className="link" onClick={() => onOpen(ch.memory!.id)}>
                {title(ch.memory)}
              </button>
            ) : null}
            <span className="muted"> {ch.what}</span>
          </li>
        ))}
        {preview.total > preview.changes.length && <li className="muted">… and {preview.total - preview.changes.length} more.</li>}
      </ul>
      <div className="actions">
        <button id="apply" className="primary" disabled={busy} onClick={onApply}>
          {ACTION_WORDS[preview.action]}
        </button>
        <button id="preview-cancel" disabled={busy} onClick={onCancel}>
          Not now
        </button>
      </div>
    </div>
  );
}
