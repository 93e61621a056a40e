import { useState } from "react";
import { commands, type ComparedView_Serialize as ComparedView, type PromptView_Serialize as PromptView } from "./bindings";
import { failed } from "./loaded";
import { count } from "./format";

// One side of the comparison: the memories the model reads, and what they cost.
function Side({ id, heading, prompt, onOpenMemory }: { id: string; heading: string; prompt: PromptView; onOpenMemory: (id: string) => void }) {
  return (
    <div className="side" id={id}>
      <h4>{heading}</h4>
      <div className="muted">
        {count(prompt.injected.length, "memory", "memories")} in {prompt.used} of {prompt.budget} tokens
      </div>
      {prompt.concepts.map((c) => (
        <div className="concept-use" key={c.id}>
          <button className="link" onClick={() => onOpenMemory(c.id)} title="Open this concept">
            {c.name}
          </button>{" "}
          {c.covered > 0
            ? `stands for ${count(c.covered, "memory", "memories")} left out (${c.covered_tokens} tokens) in ${c.tokens} tokens: ${
                c.saved >= 0 ? `${count(c.saved, "token", "tokens")} saved` : `${count(-c.saved, "token", "tokens")} more`
              }.`
            : `is in the prompt beside its memories (${c.tokens} tokens).`}
        </div>
      ))}
      <pre className="block">{prompt.memories || "No memory fits."}</pre>
    </div>
  );
}

// The token budgets a comparison offers besides the answer's own.
const ROOMS = [250, 500, 1000, 2000];
const DEFAULT_ROOM = 500;

// The same question's prompt from the memories as they are and with concepts standing for
// their members, side by side, within a budget a person picks.
export function Compare({
  question,
  model,
  budget,
  onOpenMemory,
}: {
  question: string;
  model: string;
  budget: number;
  onOpenMemory: (id: string) => void;
}) {
  const [shown, setShown] = useState<ComparedView | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Concepts matter where room is short: the comparison starts at a small budget.
  const [room, setRoom] = useState(Math.min(budget, DEFAULT_ROOM));
  const load = async (tokens: number) => {
    setRoom(tokens);
    const res = await commands.compareContexts(question, model, tokens);
    if (failed(res, setError)) return;
    setError(null);
    setShown(res.data);
  };
  const compare = () => (shown ? setShown(null) : load(room));
  const rooms = [...new Set([...ROOMS.filter((r) => r < budget), budget])];
  const used = shown?.compacted.concepts.length ?? 0;
  return (
    <div className="compare">
      <button className="link compare-toggle" onClick={compare} title="The prompt for this question without and with concepts">
        {shown ? "Hide the comparison" : "Compare with concepts"}
      </button>
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
      {shown && (
        <>
          <label className="compare-room">
            Room for memories and question:{" "}
            <select id="compare-room" value={room} onChange={(e) => load(Number(e.target.value))}>
              {rooms.map((r) => (
                <option key={r} value={r}>
                  {r === budget ? `${r.toLocaleString()} tokens (this answer's)` : `${r.toLocaleString()} tokens`}
                </option>
              ))}
            </select>
          </label>
          <p className="muted compare-said">
            {used === 0
              ? "No concept fits this question, so both prompts are the same. Group related memories (Memories → Concepts) to form concepts."
              : `With concepts, ${count(used, "concept", "concepts")} ${used === 1 ? "stands" : "stand"} in for the memories ${used === 1 ? "it groups" : "they group"}, leaving room for others.`}
          </p>
          <div className="sides">
            <Side id="compare-raw" heading="Memories as they are" prompt={shown.raw} onOpenMemory={onOpenMemory} />
            <Side id="compare-compacted" heading="With concepts" prompt={shown.compacted} onOpenMemory={onOpenMemory} />
          </div>
        </>
      )}
    </div>
  );
}
