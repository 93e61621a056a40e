import { count } from "./format";

// What a forget of one memory or of several reports.
type Erased = { redacted_events: number | null; retired_adapters: string[]; scrubbed: boolean };

// The app's own "forget?" question (not the system's box): what will be erased, and two
// plain choices, "Keep it" being the one a stray Enter picks. `name` is the memory's title, or
// with `many` a count of memories ("3 memories").
export function ForgetDialog({ name, many, onForget, onKeep }: { name: string; many?: boolean; onForget: () => void; onKeep: () => void }) {
  return (
    <div className="backdrop">
      <div className="dialog" role="alertdialog" aria-modal="true" aria-labelledby="forget-title" id="forget-dialog">
        <h3 id="forget-title">{many ? `Forget ${name}?` : `Forget “${name}”?`}</h3>
        <p>
          {many ? "Their" : "Its"} words will be erased everywhere Strata keeps them: search, {many ? "their histories" : "its history"},
          the database file, and anything the on-device model was trained on from {many ? "them" : "it"}. This cannot be undone.
        </p>
        <div className="actions">
          <button className="danger" id="forget-confirm" onClick={onForget}>
            Forget it
          </button>
          <button id="forget-cancel" onClick={onKeep} autoFocus>
            Keep it
          </button>
        </div>
      </div>
    </div>
  );
}

// What a forget did, in words; `several` when several were forgotten at once.
export function forgotten(name: string, r: Erased, several?: number) {
  const changes = count(r.redacted_events ?? 0, "earlier change", "earlier changes");
  let s =
    several === undefined
      ? `Forgot “${name}”: its words are erased from search, from its history (${changes}) and from the file.`
      : `Forgot ${count(several, "memory", "memories")}: their words are erased from search, from their histories (${changes}) and from the file.`;
  if (r.retired_adapters.length > 0)
    s += ` The on-device model no longer uses what it learned from ${several === undefined ? "it" : "them"}: ${count(
      r.retired_adapters.length,
      "trained adapter was",
      "trained adapters were",
    )} retired and deleted.`;
  if (!r.scrubbed) s += " Another program is still reading the database; the file is wiped as soon as it stops.";
  return s;
}
