import type { ForgetReport } from "./bindings";

// The app's own "forget?" question (not the system's box): what will be erased, and two
// plain choices, "Keep it" being the one a stray Enter picks.
export function ForgetDialog({ name, onForget, onKeep }: { name: string; onForget: () => void; onKeep: () => void }) {
  return (
    <div className="backdrop">
      <div className="dialog" role="alertdialog" aria-modal="true" aria-labelledby="forget-title" id="forget-dialog">
        <h3 id="forget-title">Forget “{name}”?</h3>
        <p>
          Its words will be erased everywhere Strata keeps them: search, its history, the database file, and anything the
          on-device model was trained on from it. This cannot be undone.
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

// What a forget did, in words.
export function forgotten(name: string, r: ForgetReport) {
  let s = `Forgot “${name}”: its words are erased from search, from its history (${r.redacted_events} earlier ${
    r.redacted_events === 1 ? "change" : "changes"
  }) and from the file.`;
  if (r.retired_adapters.length > 0)
    s += ` The on-device model no longer uses what it learned from it: ${r.retired_adapters.length} trained ${
      r.retired_adapters.length === 1 ? "adapter was" : "adapters were"
    } retired and deleted.`;
  if (!r.scrubbed) s += " Another program is still reading the database; the file is wiped as soon as it stops.";
  return s;
}
