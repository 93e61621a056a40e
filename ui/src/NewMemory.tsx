import { useState } from "react";
import { commands, type MemoryForm_Deserialize as MemoryForm, type MemoryView_Serialize as MemoryView } from "./bindings";
import { failed } from "./loaded";
import { IMPORTANCE, words } from "./format";

type Kind = "semantic" | "episodic" | "procedural";

const LABELS: Record<Kind, string> = {
  semantic: "A fact about something",
  episodic: "Something that was said or happened",
  procedural: "How to do something",
};

// A fact's value as the form shows it, in the shape saving reads it back in: a list as items
// between commas, yes or no, a number as written, a group (rare) as JSON.
const asText = (v: unknown) =>
  typeof v === "string"
    ? v
    : typeof v === "boolean"
      ? v
        ? "yes"
        : "no"
      : Array.isArray(v) && v.every((x) => typeof x !== "object")
        ? v.join(", ")
        : typeof v === "number"
          ? String(v)
          : JSON.stringify(v);

// What a value's shape asks of the person editing it.
const hint = (v: unknown) => (Array.isArray(v) ? "a list: separate items with commas" : typeof v === "boolean" ? "yes or no" : null);

// A form for each memory type: facts as name/value rows, an episode as speaker, words and
// time, a procedure as ordered steps. No JSON needed. With `editing`, the same form filled
// in with that memory (its type, key and name fixed), saving changes instead.
export function NewMemory({
  editing,
  onCreated,
  onCancel,
}: {
  editing?: MemoryView;
  onCreated: (m: MemoryView) => void;
  onCancel: () => void;
}) {
  const e = editing;
  const [kind, setKind] = useState<Kind>(e?.type ?? "semantic");
  const [key, setKey] = useState(e?.type === "semantic" ? e.key : "");
  // Each fact's name in words, as its page shows it ("Favourite drink"); a name left as it was
  // is saved under the key it had ("favourite_drink").
  const [facts, setFacts] = useState<[string, string][]>(
    e?.type === "semantic" ? Object.entries(e.facts).map(([k, v]) => [words(k), asText(v)]) : [["", ""]],
  );
  const keys: Record<string, string> = e?.type === "semantic" ? Object.fromEntries(Object.keys(e.facts).map((k) => [words(k), k])) : {};
  const [speaker, setSpeaker] = useState(e?.type === "episodic" && e.body.form === "utterance" ? e.body.speaker : "");
  const [text, setText] = useState(e?.type === "episodic" && e.body.form === "utterance" ? e.body.text : "");
  const [when, setWhen] = useState(e?.type === "episodic" ? e.occurred_at : "");
  const [name, setName] = useState(e?.type === "procedural" ? e.name : "");
  const [steps, setSteps] = useState(e?.type === "procedural" ? e.steps.join("\n") : "");
  const [context, setContext] = useState(e?.type === "procedural" ? (e.context ?? "") : "");
  const [tags, setTags] = useState(e ? e.tags.join(", ") : "");
  const keep = e !== undefined && !IMPORTANCE.some(([v]) => v === e.importance);
  const [importance, setImportance] = useState(keep ? "" : String(e?.importance ?? 0.5));
  const [error, setError] = useState<string | null>(null);

  const save = async () => {
    const content: MemoryForm["content"] =
      kind === "semantic"
        ? { type: "semantic", key, facts: facts.map(([n, v]) => [keys[n] ?? n, v] as [string, string]) }
        : kind === "episodic"
          ? { type: "episodic", speaker, text, occurred_at: when || null }
          : { type: "procedural", name, steps: steps.split("\n"), context: context || null };
    const tagList = tags.split(/[,\s]+/).filter(Boolean);
    const level = importance === "" ? null : Number(importance);
    const res = e
      ? await commands.editMemory(e.id, { content, tags: tagList, importance: level, expected_version: e.version })
      : await commands.addMemory({ content, tags: tagList, importance: level });
    if (!failed(res, setError)) onCreated(res.data);
  };

  return (
    <form
      id="new-memory"
      className="form"
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
      onChange={() => setError(null)}
    >
      <h2>{e ? "Edit memory" : "New memory"}</h2>
      <KindChoice kind={kind} onKind={setKind} hidden={!!e} />
      {kind === "semantic" && (
        <FactFields
          about={key}
          onAbout={setKey}
          facts={facts}
          setFacts={setFacts}
          editing={e?.type === "semantic" ? e.facts : undefined}
          keys={keys}
        />
      )}
      {kind === "episodic" && (
        <SaidFields speaker={speaker} onSpeaker={setSpeaker} text={text} onText={setText} when={when} onWhen={setWhen} editing={!!e} />
      )}
      {kind === "procedural" && (
        <StepsFields
          name={name}
          onName={setName}
          steps={steps}
          onSteps={setSteps}
          context={context}
          onContext={setContext}
          editing={!!e}
        />
      )}
      <ImportanceField value={importance} onChange={setImportance} kept={keep ? (e?.importance ?? undefined) : undefined} />
      <label>
        Tags <input name="tags" value={tags} onChange={(e) => setTags(e.target.value)} placeholder="family, health" />
      </label>
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
      <div className="actions">
        <button type="submit" id="save">
          Save
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

type Fact = [string, string];

// A fact memory's fields: what it is about, and its facts as name and value, added and removed.
function FactFields({
  about,
  onAbout,
  facts,
  setFacts,
  editing,
  keys,
}: {
  about: string;
  onAbout: (v: string) => void;
  facts: Fact[];
  setFacts: (f: (old: Fact[]) => Fact[]) => void;
  editing?: Record<string, unknown>;
  keys: Record<string, string>;
}) {
  const setFact = (i: number, j: 0 | 1, v: string) =>
    setFacts((old) => old.map((f, k) => (k === i ? (j === 0 ? [v, f[1]] : [f[0], v]) : f)));
  return (
    <>
      <label>
        About <input name="key" value={about} readOnly={!!editing} onChange={(e) => onAbout(e.target.value)} placeholder="e.g. pixel, favourite_tea" />
      </label>
      {facts.map((f, i) => (
        <div className="fact" key={i}>
          <input name={`fact-name-${i}`} value={f[0]} placeholder="fact (e.g. colour)" onChange={(e) => setFact(i, 0, e.target.value)} />
          <input name={`fact-value-${i}`} value={f[1]} placeholder="value (e.g. ginger)" onChange={(e) => setFact(i, 1, e.target.value)} />
          {editing && hint(editing[keys[f[0]] ?? f[0]]) && <span className="muted hint">{hint(editing[keys[f[0]] ?? f[0]])}</span>}
          {facts.length > 1 && (
            <button type="button" className="link" name={`remove-fact-${i}`} onClick={() => setFacts((old) => old.filter((_, k) => k !== i))}>
              Remove
            </button>
          )}
        </div>
      ))}
      <button type="button" id="add-fact" onClick={() => setFacts((old) => [...old, ["", ""]])}>
        Add a fact
      </button>
    </>
  );
}

// A procedure's fields: its name, its steps one per line, and when it applies.
function StepsFields(p: {
  name: string;
  onName: (v: string) => void;
  steps: string;
  onSteps: (v: string) => void;
  context: string;
  onContext: (v: string) => void;
  editing: boolean;
}) {
  return (
    <>
      <label>
        Name <input name="name" value={p.name} readOnly={p.editing} onChange={(e) => p.onName(e.target.value)} />
      </label>
      <label>
        Steps, one per line <textarea name="steps" value={p.steps} onChange={(e) => p.onSteps(e.target.value)} />
      </label>
      <label>
        When it applies <input name="context" value={p.context} onChange={(e) => p.onContext(e.target.value)} />
      </label>
    </>
  );
}

// How important it is, in words; an edited memory's own level, if it is none of them, kept.
function ImportanceField({ value, onChange, kept }: { value: string; onChange: (v: string) => void; kept?: number }) {
  return (
    <label>
      Importance{" "}
      <select name="importance" value={value} onChange={(e) => onChange(e.target.value)}>
        {kept !== undefined && <option value="">As it is ({kept})</option>}
        {IMPORTANCE.map(([v, label]) => (
          <option key={v} value={String(v)}>
            {label}
          </option>
        ))}
      </select>
    </label>
  );
}

// What was said: who, the words, and when.
function SaidFields(p: {
  speaker: string;
  onSpeaker: (v: string) => void;
  text: string;
  onText: (v: string) => void;
  when: string;
  onWhen: (v: string) => void;
  editing: boolean;
}) {
  return (
    <>
      <label>
        Who <input name="speaker" value={p.speaker} readOnly={p.editing} onChange={(e) => p.onSpeaker(e.target.value)} placeholder="user" />
      </label>
      <label>
        What was said <textarea name="text" value={p.text} onChange={(e) => p.onText(e.target.value)} />
      </label>
      <label>
        When{" "}
        <input
          name="when"
          value={p.when}
          readOnly={p.editing}
          onChange={(e) => p.onWhen(e.target.value)}
          placeholder="now, 2026-05-01, yesterday, last Saturday…"
        />
      </label>
    </>
  );
}

// Which type of memory a new one is (hidden when editing: a memory keeps its type).
function KindChoice({ kind, onKind, hidden }: { kind: Kind; onKind: (k: Kind) => void; hidden: boolean }) {
  return (
    <div className="kinds" role="radiogroup" hidden={hidden}>
      {(Object.keys(LABELS) as Kind[]).map((k) => (
        <label key={k}>
          <input type="radio" name="kind" value={k} checked={kind === k} onChange={() => onKind(k)} /> {LABELS[k]}
        </label>
      ))}
    </div>
  );
}
