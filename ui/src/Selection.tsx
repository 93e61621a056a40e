import { useState } from "react";
import { commands } from "./bindings";
import { failed } from "./loaded";
import { ForgetDialog, forgotten } from "./Forget";
import { count, TIER_WORDS } from "./format";

// What can be done to the memories ticked in the list, all at once: tag them, move them to a
// tier, or forget them (after the app's own question). Each is one change: all or none.
export function Selection({ ids, onDone, onClear }: { ids: string[]; onDone: (said: string) => void; onClear: () => void }) {
  const [tag, setTag] = useState("");
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const n = ids.length;
  const them = count(n, "memory", "memories");
  const done = (said: string) => {
    setError(null);
    setTag("");
    onDone(said);
  };

  const addTag = async () => {
    const t = tag.trim();
    if (!t) return;
    const res = await commands.tagMany(ids, t);
    if (!failed(res, setError)) done(`Tagged ${them} “${t}”.`);
  };
  const move = async (tier: string) => {
    const res = await commands.moveMany(ids, tier);
    if (!failed(res, setError)) done(`Moved ${them} to ${TIER_WORDS[tier].toLowerCase()}.`);
  };
  const forget = async () => {
    setAsking(false);
    const res = await commands.forgetMany(ids);
    if (!failed(res, setError)) done(forgotten(them, res.data, n));
  };

  return (
    <div className="selection" id="selection" role="toolbar" aria-label="The chosen memories">
      <strong>{them} chosen</strong>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          addTag();
        }}
      >
        <input id="selection-tag" value={tag} onChange={(e) => setTag(e.target.value)} placeholder="tag" aria-label="Tag to add" />
        <button type="submit" id="selection-add-tag" disabled={!tag.trim()}>
          Tag
        </button>
      </form>
      <select id="selection-tier" value="" onChange={(e) => e.target.value && move(e.target.value)} aria-label="Move to">
        <option value="">Move to…</option>
        {Object.entries(TIER_WORDS).map(([v, w]) => (
          <option key={v} value={v}>
            {w}
          </option>
        ))}
      </select>
      <button className="danger" id="selection-forget" onClick={() => setAsking(true)}>
        Forget…
      </button>
      <button className="link" id="selection-clear" onClick={onClear}>
        Clear
      </button>
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
      {asking && <ForgetDialog name={them} many onForget={forget} onKeep={() => setAsking(false)} />}
    </div>
  );
}
