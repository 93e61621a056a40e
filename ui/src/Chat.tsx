import { useEffect, useRef, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import {
  commands,
  type ChatEvent_Deserialize as ChatEvent,
  type ChatChoice_Serialize as ChatChoice,
  type ChatTurnView_Serialize as Turn,
  type ConversationTurnView_Serialize as Kept,
  type ConversationView as Conversation,
  type OnDeviceModelView,
  type ProviderView_Serialize as ProviderView,
  type SettingsView_Serialize as SettingsView,
} from "./bindings";
import { answered, failed } from "./loaded";
import { Compare } from "./Compare";
import { ForgetDialog, forgotten } from "./Forget";
import { remember, titleOf } from "./Models";
import { count, title, when } from "./format";

// One turn on screen: what was asked and answered, the recorded exchange's id, and what a
// person did with it since (marked wrong, forgotten).
type Entry = {
  question: string;
  answer: string;
  id?: string | null;
  by?: string | null;
  turn?: Turn;
  // The memories found for the question, known before the model's first word.
  found?: Extract<ChatEvent, { kind: "found" }>["value"];
  error?: string;
  wrong?: boolean;
  notice?: string;
  gone?: boolean;
};

// The parts of a prompt in the words the memory list uses.
const SECTIONS: Record<string, [string, string]> = {
  system: ["Instructions", "#98a2b3"],
  facts: ["Facts", "#13867a"],
  procedures: ["Procedures", "#7a5af8"],
  episodes: ["Episodes", "#f79009"],
  history: ["This conversation", "#2e90fa"],
  message: ["Your question", "#667085"],
  framing: ["Layout", "#d0d5dd"],
};
const sectionWord = (s: string) => SECTIONS[s]?.[0] ?? s;

// The token budget as a bar: one segment per part of the prompt.
function Budget({ turn }: { turn: Turn }) {
  const parts = turn.sections.filter(([, t]) => t > 0);
  return (
    <div className="budget" title={`${turn.used} of ${turn.budget} tokens (${turn.tokenizer})`}>
      <div className="bar">
        {parts.map(([s, t]) => (
          <span
            key={s}
            style={{ width: `${(100 * t) / Math.max(turn.budget, 1)}%`, background: SECTIONS[s]?.[1] ?? "#999" }}
            title={`${sectionWord(s)}: ${t} tokens`}
          />
        ))}
      </div>
      <div className="legend">
        The question used {turn.used} of {turn.budget} tokens: {parts.map(([s, t]) => `${sectionWord(s).toLowerCase()} ${t}`).join(", ")}
      </div>
    </div>
  );
}

const ON_DEVICE: ChatChoice = { provider: "on-device", model: "", base_url: null };

// Which model answers: the on-device one (the default, no key) or a provider's, remembered
// in Settings for next time. Providers are read again each time the screen is shown (a key
// may have been added or removed in Settings meanwhile).
function Picker({ choice, onChange, active }: { choice: ChatChoice; onChange: (c: ChatChoice) => void; active: boolean }) {
  const [providers, setProviders] = useState<ProviderView[]>([]);
  const [local, setLocal] = useState<OnDeviceModelView[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!active) return;
    answered(commands.providers(), setProviders);
    commands.onDeviceModels().then((r) => {
      if (failed(r)) return;
      remember(r.data);
      setLocal(r.data);
    });
  }, [active]);
  const models = providers.find((p) => p.name === choice.provider)?.models ?? [];
  // Only models that are fully on this computer are offered; the one answering is chosen.
  const ready = local.filter((m) => m.state === "ready");
  const answering = local.find((m) => m.answers);
  const pick = async (value: string) => {
    if (!value.startsWith("on-device:")) return onChange({ provider: value, model: "", base_url: null });
    const res = await commands.chooseModel(value.slice("on-device:".length), false);
    setError(null);
    if (!failed(res, setError)) setLocal(res.data);
    onChange(ON_DEVICE);
  };
  return (
    <div className="picker">
      Model:
      <select
        id="chat-provider"
        value={choice.provider === "on-device" ? `on-device:${answering?.name ?? ""}` : choice.provider}
        onChange={(e) => pick(e.target.value)}
        aria-label="Provider"
      >
        {ready.length === 0 && <option value={`on-device:${answering?.name ?? ""}`}>On this computer</option>}
        {ready.map((m) => (
          <option key={m.name} value={`on-device:${m.name}`}>
            On this computer — {m.title}
          </option>
        ))}
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
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

const newId = () => `chat-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
// Who answered, in words.
// Who answered, in words; the on-device model's name ends `+ad_…` when a trained adapter was
// in use.
const answeredBy = (provider?: string | null, model?: string | null) => {
  if (provider !== "on-device") return [provider, model].filter(Boolean).join(" ") || null;
  const [file, adapter] = (model ?? "the model").split("+");
  const base = titleOf(file);
  return adapter ? `${base} on this computer, with what it learned from your memories (adapter ${adapter})` : `${base} on this computer`;
};
// A kept turn, with the prompt it was answered from where the usage records kept it: the
// memories used, the budget and Compare, as when it was answered.
const kept = (t: Kept): Entry => ({
  question: t.question,
  answer: t.answer,
  id: t.id,
  by: answeredBy(t.provider, t.model),
  wrong: t.wrong,
  turn: t.prompt
    ? {
        answer: t.answer,
        provider: t.provider ?? "",
        model: t.model ?? "",
        finish: "stop",
        injected: t.prompt.injected,
        sections: t.prompt.sections,
        budget: t.prompt.budget,
        used: t.prompt.used,
        tokenizer: "",
        recorded_id: t.id,
        source: null,
        guess: null,
      }
    : undefined,
});

// The past conversations, the one used last first, and a way to start a new one.
function Conversations({
  list,
  current,
  onOpen,
  onNew,
}: {
  list: Conversation[];
  current: string;
  onOpen: (id: string) => void;
  onNew: () => void;
}) {
  return (
    <nav className="conversations" aria-label="Conversations">
      <button id="chat-new" onClick={onNew}>
        New conversation
      </button>
      <ul>
        {list.map((c) => (
          <li key={c.id}>
            <button className={`link ${c.id === current ? "current" : ""}`} onClick={() => onOpen(c.id)} title={`Started ${when(c.started_at)}`}>
              <span className="conversation-title">{c.title}</span>
              <span className="muted">
                {when(c.last_at)} · {count(c.turns, "question", "questions")}
              </span>
            </button>
          </li>
        ))}
      </ul>
      {list.length === 0 && <p className="muted">Conversations you have here are kept, and listed here.</p>}
    </nav>
  );
}

// What a person can do with a remembered answer: mark it wrong (kept, crossed out, never used
// again) or have it not remembered at all (forgotten everywhere).
// Whether a memory put in the prompt helped: said once, counted in Analytics.
function RateMemory({ id }: { id: string }) {
  const [said, setSaid] = useState<boolean | null>(null);
  const rate = (helpful: boolean) => commands.rate(id, "memory", helpful).then((r) => !failed(r) && setSaid(helpful));
  if (said !== null) return <span className="rated"> · {said ? "useful" : "not useful"}, noted</span>;
  return (
    <span className="rate">
      {" "}
      <button className="link" onClick={() => rate(true)} title="This memory helped: count it in Analytics">
        useful
      </button>{" "}
      /{" "}
      <button className="link" onClick={() => rate(false)} title="This memory did not help: count it in Analytics">
        not useful
      </button>
    </span>
  );
}

function AnswerActions({ entry, onWrong, onForget }: { entry: Entry; onWrong: () => void; onForget: () => void }) {
  const [helpful, setHelpful] = useState(false);
  if (!entry.id || entry.gone) return null;
  const id = entry.id;
  const rate = () => commands.rate(id, "answer", true).then((r) => !failed(r) && setHelpful(true));
  return (
    <div className="answer-actions">
      {!entry.wrong &&
        (helpful ? (
          <span className="helpful-said">Noted as helpful</span>
        ) : (
          <button className="link helpful" onClick={rate} title="Count this answer as helpful in Analytics">
            Helpful
          </button>
        ))}
      {!entry.wrong && (
        <button className="link wrong-answer" onClick={onWrong} title="Strata will not use this answer again">
          Wrong answer
        </button>
      )}
      <button className="link dont-remember" onClick={onForget} title="Erase this question and answer from memory">
        Don’t remember this
      </button>
    </div>
  );
}

// Chat with memory: each answer streams in, with the memories that were put in its prompt
// (each opens in the memory list) and how the token budget was spent. Every exchange is
// remembered in its conversation; conversations are kept in the store and listed beside.
export function Chat({
  active,
  onOpenMemory,
  onOpenFacts,
}: {
  active: boolean;
  onOpenMemory: (id: string) => void;
  onOpenFacts: () => void;
}) {
  const [conversation, setConversation] = useState(newId);
  const [list, setList] = useState<Conversation[]>([]);
  const [entries, setEntries] = useState<Entry[]>([]);
  const [input, setInput] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // The running answer's job id, for Stop.
  const [job, setJob] = useState<string | null>(null);
  // Reading the conversation for facts after an answer: its job while it runs, then what it found.
  const [factsJob, setFactsJob] = useState<string | null>(null);
  const [factsNote, setFactsNote] = useState<{ text: string; review: boolean } | null>(null);
  const [choice, setChoice] = useState<ChatChoice>(ON_DEVICE);
  const [saved, setSaved] = useState<SettingsView | null>(null);
  const [forgetting, setForgetting] = useState<number | null>(null);
  const turnsEnd = useRef<HTMLDivElement>(null);

  const refreshList = () =>
    commands.conversations().then((r) => {
      if (!failed(r, setError)) setList(r.data);
      return failed(r) ? [] : r.data;
    });

  const open = async (id: string) => {
    const res = await commands.conversation(id);
    if (failed(res, setError)) return;
    setError(null);
    setConversation(id);
    setEntries(res.data.map(kept));
  };

  // The conversation used last is where the window opens.
  useEffect(() => {
    refreshList().then((l) => {
      if (l.length > 0) open(l[0].id);
    });
    commands.settings().then((r) => {
      if (failed(r)) return;
      setSaved(r.data);
      if (r.data.saved.chat) setChoice(r.data.saved.chat);
    });
  }, []);

  // Conversations forgotten or added elsewhere show when the screen is shown again.
  useEffect(() => {
    if (active) refreshList();
  }, [active]);

  // The newest answer stays in view as it streams in.
  useEffect(() => {
    turnsEnd.current?.scrollIntoView?.({ block: "end" });
  }, [entries]);

  // Saves go one after another, so the last choice typed is the one kept (a save per
  // keystroke that finished out of order could leave "gpt-4o-min").
  const saving = useRef<Promise<unknown>>(Promise.resolve());
  const choose = (c: ChatChoice) => {
    setChoice(c);
    if (saved) {
      const next = { ...saved.saved, chat: c.provider === "on-device" ? null : c };
      saving.current = saving.current
        .then(() => commands.saveSettings(next))
        .then((r) => !failed(r) && setSaved(r.data));
    }
  };

  const update = (index: number, f: (e: Entry) => Entry) => setEntries((old) => old.map((e, i) => (i === index ? f(e) : e)));

  const send = async () => {
    const question = input.trim();
    if (!question || busy) return;
    setInput("");
    setBusy(true);
    // What the model is told was said: not answers marked wrong, nor forgotten turns.
    const history = entries
      .filter((e) => !e.wrong && !e.gone && !e.error)
      .flatMap((e) => [
        { role: "user", content: e.question },
        { role: "assistant", content: e.answer },
      ]);
    const index = entries.length;
    setEntries((old) => [...old, { question, answer: "" }]);
    const onEvent = new Channel<ChatEvent>();
    onEvent.onmessage = (event) =>
      update(index, (e) => (event.kind === "found" ? { ...e, found: event.value } : { ...e, answer: e.answer + event.value }));
    const id = `job-${Date.now()}`;
    setJob(id);
    const res = await commands.chat(id, conversation, question, history, choice.provider === "on-device" ? null : choice, onEvent);
    setJob(null);
    const ok = !failed(res, (words) => update(index, (e) => ({ ...e, error: words })));
    if (ok) update(index, (e) => ({ ...e, answer: res.data.answer, turn: res.data, id: res.data.recorded_id }));
    setBusy(false);
    refreshList();
    if (ok && res.data.recorded_id) readFacts();
  };

  // After an answer, the conversation is read for facts in the background (the settings say
  // whether, and whether they wait for review). One reading at a time: turns not read yet
  // are read by the next one.
  const readFacts = async () => {
    if (factsJob) return;
    const id = `facts-${Date.now()}`;
    setFactsJob(id);
    setFactsNote({ text: "Looking for facts to remember in this conversation…", review: false });
    const res = await commands.extractConversation(id, conversation, choice.provider === "on-device" ? null : choice, new Channel());
    setFactsJob(null);
    if (failed(res, (words) => setFactsNote({ text: `Facts could not be read from this conversation: ${words}`, review: false }))) return;
    const { on, proposed, applied } = res.data;
    if (!on || proposed + applied === 0) return setFactsNote(null);
    if (proposed > 0)
      return setFactsNote({
        text: `${count(proposed, "fact", "facts")} from this conversation ${proposed === 1 ? "is" : "are"} waiting for your review.`,
        review: true,
      });
    setFactsNote({ text: `Strata remembered ${count(applied, "new fact", "new facts")} from this conversation.`, review: true });
  };

  const markWrong = async (index: number) => {
    const res = await commands.markAnswerWrong(entries[index].id!);
    if (failed(res, (words) => update(index, (e) => ({ ...e, notice: words })))) return;
    update(index, (e) => ({
      ...e,
      wrong: true,
      notice:
        "Marked wrong. Strata will not give this answer to a model again, and search will not find it. It stays here, crossed out, so you can see what was said.",
    }));
  };

  const forget = async (index: number) => {
    setForgetting(null);
    const res = await commands.forget(entries[index].id!);
    if (failed(res, (words) => update(index, (e) => ({ ...e, notice: words })))) return;
    update(index, (e) => ({ ...e, gone: true, notice: forgotten("this question and its answer", res.data) }));
    refreshList();
  };

  const startNew = () => {
    setConversation(newId());
    setEntries([]);
    setFactsNote(null);
  };

  return (
    <div className="chat-screen">
      <Conversations list={list} current={conversation} onOpen={open} onNew={startNew} />
      <div className="chat">
        <Picker choice={choice} onChange={choose} active={active} />
        {error && (
          <div className="error" role="alert">
            {error}
          </div>
        )}
        <div className="turns">
          {entries.length === 0 && (
            <div className="empty">
              Ask anything. The model answers with what Strata remembers, and the conversation is remembered too. If an answer
              is wrong, say so under it: Strata will not use it again.
            </div>
          )}
          {entries.map((e, i) => (
            <div className="turn" key={i}>
              <div className="question">{e.question}</div>
              {e.gone ? null : e.answer ? (
                <div className={`answer ${e.wrong ? "wrong" : ""}`}>{e.answer}</div>
              ) : (
                busy && i === entries.length - 1 && !e.error && <div className="answer thinking">Thinking…</div>
              )}
              {!e.turn && e.found && busy && i === entries.length - 1 && (
                <div className="found muted" id="found">
                  {e.found.length === 0
                    ? "No memory bears on this question."
                    : `Found ${count(e.found.length, "memory", "memories")}: ${e.found
                        .slice(0, 4)
                        .map((m) => m.title)
                        .join(" · ")}${e.found.length > 4 ? " …" : ""}`}
                </div>
              )}
              {e.turn?.guess && !e.gone && (
                <div className="guess muted">
                  The model guessed “{e.turn.guess.trim()}”, but none of the memories it was given says so, so it is not shown as the
                  answer.
                </div>
              )}
              {e.turn?.source?.memory && !e.gone && !e.wrong && (
                <div className="source">
                  The memory closest to your question:{" "}
                  <button className="link" onClick={() => onOpenMemory(e.turn!.source!.id)} title="Open this memory">
                    {title(e.turn.source.memory)}
                  </button>
                </div>
              )}
              {e.error && (
                <div className="error" role="alert">
                  {e.error}
                </div>
              )}
              {e.notice && <div className="notice">{e.notice}</div>}
              {e.turn?.finish === "cancelled" && <div className="stopped">You stopped this answer, so it was not remembered.</div>}
              {!(busy && i === entries.length - 1) && (
                <AnswerActions entry={e} onWrong={() => markWrong(i)} onForget={() => setForgetting(i)} />
              )}
              {e.turn && !e.gone && (
                <div className="why">
                  <Budget turn={e.turn} />
                  <div className="injected">
                    <strong>Memories used ({e.turn.injected.length})</strong>
                    <ul>
                      {e.turn.injected.map((m) => (
                        <li key={m.id}>
                          <span className="section">{sectionWord(m.section)}</span>{" "}
                          {m.memory ? (
                            <button className="link" onClick={() => onOpenMemory(m.id)} title="Open this memory">
                              {title(m.memory)}
                            </button>
                          ) : (
                            m.title
                          )}
                          {m.memory && <RateMemory id={m.id} />}
                        </li>
                      ))}
                    </ul>
                    <div className="by">
                      Answered by {answeredBy(e.turn.provider, e.turn.model)}
                      {e.turn.recorded_id ? " · remembered in this conversation" : ""}
                    </div>
                    <Compare question={e.question} model={e.turn.model} budget={e.turn.budget} onOpenMemory={onOpenMemory} />
                  </div>
                </div>
              )}
              {!e.turn && e.by && <div className="by">Answered by {e.by}</div>}
            </div>
          ))}
          <div ref={turnsEnd} />
        </div>
        {factsNote && (
          <div className="facts-note" id="facts-note" role="status">
            {factsNote.text}{" "}
            {factsNote.review && (
              <button className="link" id="open-facts" onClick={onOpenFacts}>
                See the facts
              </button>
            )}
            {factsJob && (
              <button className="link" id="facts-stop" onClick={() => commands.cancelJob(factsJob)}>
                Stop
              </button>
            )}
          </div>
        )}
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
      {forgetting !== null && (
        <ForgetDialog name={entries[forgetting].question} onForget={() => forget(forgetting)} onKeep={() => setForgetting(null)} />
      )}
    </div>
  );
}
