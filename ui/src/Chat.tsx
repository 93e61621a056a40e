import { useEffect, useRef, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import {
  commands,
  type ChatEvent_Deserialize as ChatEvent,
  type ChatChoice_Serialize as ChatChoice,
  type ConversationTurnView_Serialize as Kept,
  type ConversationView as Conversation,
  type OnDeviceModelView,
  type ProviderView_Serialize as ProviderView,
  type SettingsView_Serialize as SettingsView,
} from "./bindings";
import { answered, failed } from "./loaded";
import { ForgetDialog, forgotten } from "./Forget";
import { remember } from "./Models";
import { count, when } from "./format";
import { type Entry, TurnView, answeredBy } from "./ChatTurn";
import { FilesChoice, useFilesChoice } from "./ChatFiles";

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
            {p.plugin ? ` (yours: ${p.models[0] ?? ""})` : p.needs_key && p.key_from === "missing" ? " (no key)" : ""}
          </option>
        ))}
      </select>
      {choice.provider !== "on-device" && !providers.find((p) => p.name === choice.provider)?.plugin && (
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
        files: [],
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

// Chat with memory: each answer streams in, with the memories that were put in its prompt
// (each opens in the memory list) and how the token budget was spent. Every exchange is
// remembered in its conversation; conversations are kept in the store and listed beside.
// The conversation on screen and the list beside it: the one used last opens first; the list
// is read again when the screen is shown (conversations forgotten or added elsewhere).
function useConversations(active: boolean, setError: (e: string | null) => void) {
  const [conversation, setConversation] = useState(newId);
  const [list, setList] = useState<Conversation[]>([]);
  const [entries, setEntries] = useState<Entry[]>([]);
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
  useEffect(() => {
    refreshList().then((l) => {
      if (l.length > 0) open(l[0].id);
    });
  }, []);
  useEffect(() => {
    if (active) refreshList();
  }, [active]);
  const startNew = () => {
    setConversation(newId());
    setEntries([]);
  };
  return { conversation, list, entries, setEntries, refreshList, open, startNew };
}

// Which model answers: the saved choice, saved again as it changes.
function useChatChoice() {
  const [choice, setChoice] = useState<ChatChoice>(ON_DEVICE);
  const [saved, setSaved] = useState<SettingsView | null>(null);
  useEffect(() => {
    commands.settings().then((r) => {
      if (failed(r)) return;
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
        .then((r) => !failed(r) && setSaved(r.data));
    }
  };

  return { choice, choose };
}

type FactsNoteState = { text: string; review: boolean } | null;

// After an answer, the conversation is read for facts in the background (the settings say
// whether, and whether they wait for review). One reading at a time: turns not read yet
// are read by the next one.
function useFactsReading(conversation: string, choice: ChatChoice) {
  // Its job while it runs, then what it found.
  const [factsJob, setFactsJob] = useState<string | null>(null);
  const [factsNote, setFactsNote] = useState<FactsNoteState>(null);
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

  return { factsJob, factsNote, setFactsNote, readFacts };
}

// What reading the conversation for facts found, with a way to see them or stop the reading.
function FactsNote({ note, job, onOpenFacts }: { note: FactsNoteState; job: string | null; onOpenFacts: () => void }) {
  if (!note) return null;
  return (
    <div className="facts-note" id="facts-note" role="status">
      {note.text}{" "}
      {note.review && (
        <button className="link" id="open-facts" onClick={onOpenFacts}>
          See the facts
        </button>
      )}
      {job && (
        <button className="link" id="facts-stop" onClick={() => commands.cancelJob(job)}>
          Stop
        </button>
      )}
    </div>
  );
}

// The question box: Send, or Stop while an answer comes.
function AskBox(p: { input: string; setInput: (v: string) => void; busy: boolean; job: string | null; onSend: () => void }) {
  return (
    <form
      className="ask"
      onSubmit={(ev) => {
        ev.preventDefault();
        p.onSend();
      }}
    >
      <input id="chat-input" value={p.input} onChange={(ev) => p.setInput(ev.target.value)} placeholder="Ask…" disabled={p.busy} />
      {p.busy ? (
        <button id="chat-stop" type="button" disabled={!p.job} onClick={() => p.job && commands.cancelJob(p.job)}>
          Stop
        </button>
      ) : (
        <button id="chat-send" type="submit" disabled={!p.input.trim()}>
          Send
        </button>
      )}
    </form>
  );
}

type Update = (index: number, f: (e: Entry) => Entry) => void;

// Marking an answer wrong (kept, crossed out, never used again) and forgetting a turn.
function useTurnActions(entries: Entry[], update: Update, refreshList: () => void, closeDialog: () => void) {
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
    closeDialog();
    const res = await commands.forget(entries[index].id!);
    if (failed(res, (words) => update(index, (e) => ({ ...e, notice: words })))) return;
    update(index, (e) => ({ ...e, gone: true, notice: forgotten("this question and its answer", res.data) }));
    refreshList();
  };

  return { markWrong, forget };
}

// The turns of the conversation, or what to do on an empty one.
function Turns(p: {
  entries: Entry[];
  busy: boolean;
  onWrong: (i: number) => void;
  onForget: (i: number) => void;
  onOpenMemory: (id: string) => void;
  end: React.RefObject<HTMLDivElement | null>;
}) {
  return (
    <div className="turns">
      {p.entries.length === 0 && (
        <div className="empty">
          Ask anything. The model answers with what Strata remembers, and the conversation is remembered too. If an answer is
          wrong, say so under it: Strata will not use it again.
        </div>
      )}
      {p.entries.map((e, i) => (
        <TurnView
          key={i}
          entry={e}
          answering={p.busy && i === p.entries.length - 1}
          onWrong={() => p.onWrong(i)}
          onForget={() => p.onForget(i)}
          onOpenMemory={p.onOpenMemory}
        />
      ))}
      <div ref={p.end} />
    </div>
  );
}

export function Chat({
  active,
  onOpenMemory,
  onOpenFacts,
}: {
  active: boolean;
  onOpenMemory: (id: string) => void;
  onOpenFacts: () => void;
}) {
  const [error, setError] = useState<string | null>(null);
  const { conversation, list, entries, setEntries, refreshList, open, startNew } = useConversations(active, setError);
  const { choice, choose } = useChatChoice();
  const { factsJob, factsNote, setFactsNote, readFacts } = useFactsReading(conversation, choice);
  const files = useFilesChoice(active);
  const [input, setInput] = useState("");
  const [busy, setBusy] = useState(false);
  // The running answer's job id, for Stop.
  const [job, setJob] = useState<string | null>(null);
  const [forgetting, setForgetting] = useState<number | null>(null);
  const turnsEnd = useRef<HTMLDivElement>(null);

  // The newest answer stays in view as it streams in.
  useEffect(() => {
    turnsEnd.current?.scrollIntoView?.({ block: "end" });
  }, [entries]);

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
    const model = choice.provider === "on-device" ? null : choice;
    const res = await commands.chat(id, conversation, question, history, { model, datasets: files.chosen }, onEvent);
    setJob(null);
    const ok = !failed(res, (words) => update(index, (e) => ({ ...e, error: words })));
    if (ok) update(index, (e) => ({ ...e, answer: res.data.answer, turn: res.data, id: res.data.recorded_id }));
    setBusy(false);
    refreshList();
    if (ok && res.data.recorded_id) readFacts();
  };

  const { markWrong, forget } = useTurnActions(entries, update, refreshList, () => setForgetting(null));

  return (
    <div className="chat-screen">
      <Conversations
        list={list}
        current={conversation}
        onOpen={open}
        onNew={() => {
          startNew();
          setFactsNote(null);
        }}
      />
      <div className="chat">
        <Picker choice={choice} onChange={choose} active={active} />
        {error && (
          <div className="error" role="alert">
            {error}
          </div>
        )}
        <Turns
          entries={entries}
          busy={busy}
          onWrong={markWrong}
          onForget={setForgetting}
          onOpenMemory={onOpenMemory}
          end={turnsEnd}
        />
        <FactsNote note={factsNote} job={factsJob} onOpenFacts={onOpenFacts} />
        <FilesChoice datasets={files.datasets} chosen={files.chosen} onToggle={files.toggle} />
        <AskBox input={input} setInput={setInput} busy={busy} job={job} onSend={send} />
      </div>
      {forgetting !== null && (
        <ForgetDialog name={entries[forgetting].question} onForget={() => forget(forgetting)} onKeep={() => setForgetting(null)} />
      )}
    </div>
  );
}
