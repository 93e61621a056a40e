import { useEffect, useState } from "react";
import {
  commands,
  type FieldProblem,
  type MoveView,
  type SettingsView_Serialize as SettingsView,
  type TierPolicyShape,
  type TierPreset,
} from "./bindings";
import { answered, failed } from "./loaded";
import { count, TIER_WORDS } from "./format";
import { JobBar, useJob } from "./jobs";

type TierField = { key: keyof TierPolicyShape; label: string; step: string };

// The rule's numbers in the order a person reads them, each said as what it does.
const TIER_FIELDS: { group: string; fields: TierField[] }[] = [
  {
    group: "Working memory (short-term): what the current conversation is about",
    fields: [
      { key: "working_memory_items", label: "Holds at most this many memories per conversation", step: "1" },
      { key: "working_memory_tokens", label: "… and at most this many tokens (about ¾ of a word each)", step: "100" },
      { key: "short_ttl_hours", label: "… from the last this many hours", step: "1" },
      { key: "expire_below", label: "On leaving it, a memory worth less than this fades (hidden, not erased)", step: "0.05" },
    ],
  },
  {
    group: "Long-term: what is kept",
    fields: [
      { key: "promote_to_long", label: "A memory moves up to long-term when its worth reaches", step: "0.05" },
      { key: "promote_min_accesses", label: "… and it has been recalled at least this many times", step: "1" },
      { key: "demote_below", label: "It moves back to medium-term when its worth falls below", step: "0.05" },
      { key: "long_idle_days", label: "… and it has not been used for this many days", step: "1" },
    ],
  },
  {
    group: "A memory's worth (0 to 1): how much each of these counts — the three add up to 1",
    fields: [
      { key: "importance_weight", label: "How important it is", step: "0.05" },
      { key: "frequency_weight", label: "How often it is recalled", step: "0.05" },
      { key: "recency_weight", label: "How recently it was used", step: "0.05" },
      { key: "half_life_days", label: "Recent use counts half as much after this many days", step: "1" },
      { key: "frequent_accesses", label: "Recalled this many times counts as often", step: "1" },
    ],
  },
];
const RULE_WORDS =
  "Maintenance moves memories between short-, medium- and long-term by these rules. Pinned memories never move down, and nothing is deleted.";
const ALL_FIELDS = TIER_FIELDS.flatMap((g) => g.fields);

const asForm = (p: TierPolicyShape) => Object.fromEntries(ALL_FIELDS.map((f) => [f.key, String(p[f.key] ?? "")]));

// What a preview or a run moved, counted by kind of move ("12 from short-term to medium-term").
function summary(moves: MoveView[], apply: boolean): string {
  if (moves.length === 0) return "Every memory is in its tier; nothing to move.";
  const counts = new Map<string, number>();
  for (const m of moves) counts.set(m.change, (counts.get(m.change) ?? 0) + 1);
  const words = (change: string) => {
    if (change === "expire") return "fade from working memory";
    const [from, to] = change.split(" → ");
    return `from ${TIER_WORDS[from]?.toLowerCase() ?? from} to ${TIER_WORDS[to]?.toLowerCase() ?? to}`;
  };
  const parts = [...counts.entries()].map(([c, n]) => `${n} ${words(c)}`);
  return `${apply ? "Moved" : "Would move"} ${count(moves.length, "memory", "memories")}: ${parts.join("; ")}.`;
}

// The form as settings, or the first field that is not a number.
function settingsOf(view: SettingsView, tiers: Record<string, string>): { saved: SettingsView["saved"] } | { missing: string } {
  const next = { ...view.saved.tiers } as Record<string, number | null>;
  for (const f of ALL_FIELDS) {
    const v = Number(tiers[f.key]);
    if (tiers[f.key].trim() === "" || Number.isNaN(v)) return { missing: f.key };
    next[f.key] = v;
  }
  return { saved: { ...view.saved, tiers: next as unknown as TierPolicyShape } };
}

// The tier rule: ready-made choices in words, each number explained and checked as it is
// typed, a preview of what the numbers on screen would move before they are saved; then
// maintenance run now, and re-embedding — each a job with progress and Cancel.
export function Tiers({ view, onSaved }: { view: SettingsView; onSaved: (v: SettingsView) => void }) {
  const [tiers, setTiers] = useState<Record<string, string>>(() => asForm(view.saved.tiers));
  const [presets, setPresets] = useState<TierPreset[]>([]);
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [moves, setMoves] = useState<MoveView[] | null>(null);
  const job = useJob();

  useEffect(() => {
    answered(commands.tierPresets(), setPresets);
  }, []);

  const asSettings = () => settingsOf(view, tiers);

  // Every change is checked field by field.
  useEffect(() => {
    const s = asSettings();
    if ("missing" in s) {
      setProblems([{ field: s.missing, message: "this needs a number" }]);
      return;
    }
    answered(commands.checkTiers(s.saved), setProblems);
  }, [tiers]);

  const save = async () => {
    const s = asSettings();
    if ("missing" in s) return;
    const res = await commands.saveSettings(s.saved);
    setError(null);
    setNotice(null);
    if (failed(res, setError)) return;
    setNotice("Saved. Maintenance uses these from now on.");
    onSaved(res.data);
  };

  const maintain = async (apply: boolean) => {
    setError(null);
    setNotice(null);
    const s = asSettings();
    const unsaved = !apply && !("missing" in s) ? s.saved : null;
    const res = await job.run(apply ? "Maintaining" : "Previewing", (id, ch) => commands.maintain(id, apply, unsaved, ch));
    if (failed(res, setError)) return;
    setMoves(res.data);
    setNotice(summary(res.data, apply));
  };

  const reembed = async () => {
    setError(null);
    setNotice(null);
    const res = await job.run("Embedding", (id, ch) => commands.reembed(id, ch));
    if (failed(res, setError)) return;
    setNotice(res.data.total === 0 ? "Every memory is already searchable by meaning." : `${count(res.data.done, "memory is", "memories are")} now searchable by meaning.`);
  };

  const chosen = presets.find((p) => ALL_FIELDS.every((f) => Number(tiers[f.key]) === p.policy[f.key]));
  const unchanged = ALL_FIELDS.every((f) => Number(tiers[f.key]) === view.saved.tiers[f.key]);
  return (
    <section>
      <h3>Memory tiers</h3>
      <p className="muted">{RULE_WORDS}</p>
      <PresetPicker presets={presets} chosen={chosen} onPick={(p) => setTiers(asForm(p.policy))} />
      <TierForm tiers={tiers} problems={problems} onChange={(key, value) => setTiers((t) => ({ ...t, [key]: value }))} />
      <div className="buttons">
        <button id="save-tiers" onClick={save} disabled={problems.length > 0 || unchanged}>
          Save
        </button>
        <button id="reset-tiers" onClick={() => presets[0] && setTiers(asForm(presets[0].policy))} disabled={chosen === presets[0]}>
          Back to the defaults
        </button>
        <button id="maintain-preview" onClick={() => maintain(false)} disabled={job.running || problems.length > 0}>
          Preview what these would move
        </button>
        <button id="maintain" onClick={() => maintain(true)} disabled={job.running}>
          Run maintenance now
        </button>
        <button id="reembed" onClick={reembed} disabled={job.running} title="After a model change or a large import">
          Make every memory searchable by meaning
        </button>
      </div>
      <JobBar job={job} />
      {notice && (
        <div className="notice" id="tiers-notice">
          {notice}
        </div>
      )}
      {error && (
        <div className="error" role="alert" id="tiers-error">
          {error}
        </div>
      )}
      {moves && moves.length > 0 && <MovesTable moves={moves} />}
    </section>
  );
}

// The ready-made rules, the one the numbers match marked.
function PresetPicker({ presets, chosen, onPick }: { presets: TierPreset[]; chosen: TierPreset | undefined; onPick: (p: TierPreset) => void }) {
  return (
    <>
    <div className="presets" id="tier-presets" role="radiogroup" aria-label="Ready-made rules">
      {presets.map((p) => (
        <button
          key={p.name}
          role="radio"
          aria-checked={chosen?.name === p.name}
          className={chosen?.name === p.name ? "chosen" : ""}
          onClick={() => onPick(p)}
          title={p.description}
        >
          <strong>{p.name}</strong>
          <span className="muted">{p.description}</span>
        </button>
      ))}
    </div>
    <p className="muted" id="tier-chosen">
      {chosen ? `Now: ${chosen.name}.` : "Now: your own numbers."}
    </p>
    </>
  );
}

// Each number of the rule, said as what it does, with what is wrong with it.
function TierForm(p: { tiers: Record<string, string>; problems: FieldProblem[]; onChange: (key: string, value: string) => void }) {
  const { tiers, problems, onChange } = p;
  return (
    <div className="tier-form" id="tier-form">
      {TIER_FIELDS.map((g) => (
        <fieldset key={g.group}>
          <legend>{g.group}</legend>
          {g.fields.map((f) => {
            const problem = problems.find((p) => p.field === f.key);
            return (
              <label key={f.key} className={problem ? "invalid" : ""}>
                {f.label}
                <input
                  type="number"
                  step={f.step}
                  name={`tier-${f.key}`}
                  value={tiers[f.key]}
                  aria-invalid={!!problem}
                  onChange={(e) => onChange(f.key, e.target.value)}
                />
                {problem && <span className="problem">{problem.message}</span>}
              </label>
            );
          })}
        </fieldset>
      ))}
    </div>
  );
}

// What a preview or a run moved, the first 50 with why.
function MovesTable({ moves }: { moves: MoveView[] }) {
  return (
    <table className="moves" id="moves">
      <tbody>
        {moves.slice(0, 50).map((m) => (
          <tr key={m.id}>
            <td>{m.change}</td>
            <td className="muted">{m.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
