import { useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import { commands, type ChatTurnView_Serialize as Turn } from "./bindings";
import { describe } from "./errors";

type Entry = { question: string; answer: string; turn?: Turn; error?: string };

const SECTION_COLOURS: Record<string, string> = {
  system: "#98a2b3",
  facts: "#13867a",
  procedures: "#7a5af8",
  episodes: "#f79009",
  history: "#2e90fa",
  message: "#667085",
};

// The token budget as a bar: one segment per part of the prompt.
function Budget({ turn }: { turn: Turn }) {
  return (
    <div className="budget" title={`${turn.used} of ${turn.budget} tokens (${turn.tokenizer})`}>
      <div className="bar">
        {turn.sections
          .filter(([, t]) => t > 0)
          .map(([s, t]) => (
            <span key={s} style={{ width: `${(100 * t) / Math.max(turn.budget, 1)}%`, background: SECTION_COLOURS[s] ?? "#999" }} title={`${s}: ${t} tokens`} />
          ))}
      </div>
      <div className="legend">
        {turn.used} of {turn.budget} tokens · {turn.sections.filter(([, t]) => t > 0).map(([s, t]) => `${s} ${t}`).join(" · ")}
      </div>
    </div>
  );
}

// Chat with the on-device model: each answer streams in, with the memories that were put in
// its prompt and how the token budget was spent beside it. Every exchange is remembered.
export function Chat() {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [input, setInput] = useState("");
  const [busy, setBusy] = useState(false);

  const send = async () => {
    const question = input.trim();
    if (!question || busy) return;
    setInput("");
    setBusy(true);
    const history = entries.flatMap((e) => [
      { role: "user", content: e.question },
      { role: "assistant", content: e.answer },
    ]);
    const index = entries.length;
    setEntries((old) => [...old, { question, answer: "" }]);
    const update = (f: (e: Entry) => Entry) => setEntries((old) => old.map((e, i) => (i === index ? f(e) : e)));
    const onText = new Channel<string>();
    onText.onmessage = (piece) => update((e) => ({ ...e, answer: e.answer + piece }));
    const res = await commands.chat(question, history, onText);
    if (res.status === "ok") update((e) => ({ ...e, answer: res.data.answer, turn: res.data }));
    else update((e) => ({ ...e, error: describe(res.error) }));
    setBusy(false);
  };

  return (
    <div className="chat">
      <div className="turns">
        {entries.length === 0 && (
          <div className="empty">
            Ask anything. The on-device model answers with what Strata remembers, and the conversation is remembered
            too.
          </div>
        )}
        {entries.map((e, i) => (
          <div className="turn" key={i}>
            <div className="question">{e.question}</div>
            <div className="answer">{e.answer || (busy && i === entries.length - 1 ? "…" : "")}</div>
            {e.error && (
              <div className="error" role="alert">
                {e.error}
              </div>
            )}
            {e.turn && (
              <div className="why">
                <Budget turn={e.turn} />
                <div className="injected">
                  <strong>Memories used ({e.turn.injected.length})</strong>
                  <ul>
                    {e.turn.injected.map((m) => (
                      <li key={m.id}>
                        <span className="section">{m.section}</span> {m.title}
                      </li>
                    ))}
                  </ul>
                  <div className="by">
                    {e.turn.provider} {e.turn.model}
                    {e.turn.recorded_id ? " · remembered" : ""}
                  </div>
                </div>
              </div>
            )}
          </div>
        ))}
      </div>
      <form
        className="ask"
        onSubmit={(ev) => {
          ev.preventDefault();
          send();
        }}
      >
        <input id="chat-input" value={input} onChange={(ev) => setInput(ev.target.value)} placeholder="Ask…" disabled={busy} />
        <button id="chat-send" type="submit" disabled={busy || !input.trim()}>
          Send
        </button>
      </form>
    </div>
  );
}
