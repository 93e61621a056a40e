import { useState } from "react";
import { useLoaded, failed } from "./loaded";
import { commands, type ExampleForm, type SetMemoryView_Serialize as SetMemoryView } from "./bindings";
import { count, title } from "./format";

// The approved memories' examples as they will be taught: each memory's questions and answers
// (the held-out ones only check what was learned), editable and removable, with what is wrong
// and how to mend it. Nobody edits a file.
export function Examples({ active, onOpenMemory }: { active: boolean; onOpenMemory: (id: string) => void }) {
  const { data: set, error, setError, reload: load } = useLoaded(active, commands.trainingSet);
  if (!set) return <section className="panel">{error ?? "Preparing the examples… (the first time loads the model: a few seconds)"}</section>;
  return (
    <section className="panel" id="examples">
      <p id="examples-summary">
        {set.memories.length === 0
          ? "No memory is approved yet: choose what to teach first."
          : `${count(set.train, "example", "examples")} to learn from and ${count(set.held_out, "question", "questions")} kept aside to check what was learned, from ${count(set.memories.length, "approved memory", "approved memories")}.`}
      </p>
      {set.blocking.map((b) => (
        <div className="error" key={b}>
          {b}
        </div>
      ))}
      {set.other.map((b) => (
        <p className="notice" key={b}>
          {b}
        </p>
      ))}
      {error && <div className="error">{error}</div>}
      {set.memories.map((m) => (
        <MemoryExamples key={m.memory.id} m={m} onOpen={() => onOpenMemory(m.memory.id)} onSaved={load} onError={setError} />
      ))}
    </section>
  );
}

function MemoryExamples({
  m,
  onOpen,
  onSaved,
  onError,
}: {
  m: SetMemoryView;
  onOpen: () => void;
  onSaved: () => void;
  onError: (e: string) => void;
}) {
  const [draft, setDraft] = useState<ExampleForm[] | null>(null);
  const shown = draft ?? m.examples;
  const change = (i: number, patch: Partial<ExampleForm>) => setDraft(shown.map((e, j) => (j === i ? { ...e, ...patch } : e)));
  const save = async (examples: ExampleForm[] | null) => {
    const r = await commands.saveExamples(m.memory.id, examples);
    if (failed(r, onError)) return;
    setDraft(null);
    onSaved();
  };
  return (
    <div className="set-memory" data-id={m.memory.id}>
      <h4>
        <button className="link" onClick={onOpen} title="Open in Memories">
          {title(m.memory)}
        </button>
        {m.edited && <span className="chip">edited by you</span>}
      </h4>
      {m.problems.map((p) => (
        <p className="error set-problem" key={p}>
          {p}
        </p>
      ))}
      <table className="numbers answers set-examples">
        <thead>
          <tr>
            <th>Question</th>
            <th>Answer to learn</th>
            <th>Use</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {shown.map((e, i) => (
            <tr key={i}>
              <td>
                <textarea
                  className="example-question"
                  rows={2}
                  value={e.question}
                  onChange={(ev) => change(i, { question: ev.target.value })}
                />
              </td>
              <td>
                <textarea className="example-answer" rows={2} value={e.answer} onChange={(ev) => change(i, { answer: ev.target.value })} />
              </td>
              <td className="muted">{e.held_out ? `check only (right answer has “${e.expected ?? ""}”)` : "learn"}</td>
              <td>
                <button className="link example-remove" onClick={() => setDraft(shown.filter((_, j) => j !== i))} title="Remove this example">
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="actions-row">
        {draft && (
          <>
            <button className="primary example-save" onClick={() => save(draft)}>
              Save these examples
            </button>
            <button onClick={() => setDraft(null)}>Discard changes</button>
          </>
        )}
        {!draft && m.edited && (
          <button className="example-reset" onClick={() => save(null)}>
            Back to the examples Strata wrote
          </button>
        )}
      </div>
    </div>
  );
}
