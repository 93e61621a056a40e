import { useEffect, useRef, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import { commands, type ChatChoice_Serialize as ChatChoice, type ProviderView_Serialize as ProviderView, type SettingsView_Serialize as SettingsView, type ChatTurnView_Serialize as Turn } from "./bindings";
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

const ON_DEVICE: ChatChoice = { provider: "on-device", model: "", base_url: null };

// Which model answers: the on-device one (the default, no key) or a provider's, remembered
// in Settings for next time.
function Picker({ choice, onChange }: { choice: ChatChoice; onChange: (c: ChatChoice) => void }) {
  const [providers, setProviders] = useState<ProviderView[]>([]);
  useEffect(() => {
    commands.providers().then((r) => r.status === "ok" && setProviders(r.data));
  }, []);
  const models = providers.find((p) => p.name === choice.provider)?.models ?? [];
  return (
    <div className="picker">
      Model:
      <select
        id="chat-provider"
        value={choice.provider}
        onChange={(e) => onChange(e.target.value === "on-device" ? ON_DEVICE : { provider: e.target.value, model: "", base_url: null })}
        aria-label="Provider"
      >
        <option value="on-device">On this computer (SmolLM2)</option>
        {providers.map((p) => (
          <option key={p.name} value={p.name}>
            {p.name}
            {p.needs_key && p.key_from === "missing" ? " (no key)" : ""}
          </option>
        ))}
      </select>
      {choice.provider !== "on-device" && (
        <>
          <input
            id="chat-model"
            list="chat-models"
            value={choice.model}
            onChange={(e) => onChange({ ...choice, model: e.target.value })}
            placeholder="model name"
            aria-label="Model"
          />
          <datalist id="chat-models">
            {models.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
          {(choice.provider === "openai-compatible" || choice.provider === "ollama") && (
            <input
              id="chat-address"
              value={choice.base_url ?? ""}
              onChange={(e) => onChange({ ...choice, base_url: e.target.value || null })}
              placeholder={choice.provider === "ollama" ? "http://127.0.0.1:11434" : "http://127.0.0.1:4000/v1"}
              aria-label="Address"
            />
          )}
        </>
      )}
    </div>
  );
}

// Chat with memory: each answer streams in, with the memories that were put in its prompt and
// how the token budget was spent beside it. Every exchange is remembered.
export function Chat() {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [input, setInput] = useState("");
  const [busy, setBusy] = useState(false);
  // The running answer's job id, for Stop.
  const [job, setJob] = useState<string | null>(null);
  const [choice, setChoice] = useState<ChatChoice>(ON_DEVICE);
  const [saved, setSaved] = useState<SettingsView | null>(null);

  useEffect(() => {
    commands.settings().then((r) => {
      if (r.status !== "ok") return;
      setSaved(r.data);
      if (r.data.saved.chat) setChoice(r.data.saved.chat);
    });
  }, []);

  // Saves go one after another, so the last choice typed is the one kept (a save per
  // keystroke that finished out of order could leave "gpt-4o-min").
  const saving = useRef<Promise<unknown>>(Promise.resolve());
  const choose = (c: ChatChoice) => {
    setChoice(c);
    if (saved) {
      const next = { ...saved.saved, chat: c.provider === "on-device" ? null : c };
      saving.current = saving.current
        .then(() => commands.saveSettings(next))
        .then((r) => r.status === "ok" && setSaved(r.data));
    }
  };

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
    const id = `chat-${Date.now()}`;
    setJob(id);
    const res = await commands.chat(id, question, history, choice.provider === "on-device" ? null : choice, onText);
    setJob(null);
    if (res.status === "ok") update((e) => ({ ...e, answer: res.data.answer, turn: res.data }));
    else update((e) => ({ ...e, error: describe(res.error) }));
    setBusy(false);
  };

  return (
    <div className="chat">
      <Picker choice={choice} onChange={choose} />
      <div className="turns">
        {entries.length === 0 && (
          <div className="empty">
            Ask anything. The model answers with what Strata remembers, and the conversation is remembered too.
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
            {e.turn?.finish === "cancelled" && <div className="stopped">You stopped this answer, so it was not remembered.</div>}
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
        {busy ? (
          <button id="chat-stop" type="button" disabled={!job} onClick={() => job && commands.cancelJob(job)}>
            Stop
          </button>
        ) : (
          <button id="chat-send" type="submit" disabled={!input.trim()}>
            Send
          </button>
        )}
      </form>
    </div>
  );
}
