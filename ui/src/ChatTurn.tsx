import { useState } from "react";
import {
  commands,
  type ChatEvent_Deserialize as ChatEvent,
  type ChatTurnView_Serialize as Turn,
} from "./bindings";
import { failed } from "./loaded";
import { Compare } from "./Compare";
import { titleOf } from "./Models";
import { count, title } from "./format";
import { FilesUsed } from "./ChatFiles";

// One turn on screen: what was asked and answered, the recorded exchange's id, and what a
// person did with it since (marked wrong, forgotten).
export type Entry = {
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
  files: ["Your files", "#dd2590"],
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

// Who answered, in words; the on-device model's name ends `+ad_…` when a trained adapter was
// in use.
export const answeredBy = (provider?: string | null, model?: string | null) => {
  if (provider !== "on-device") return [provider, model].filter(Boolean).join(" ") || null;
  const [file, adapter] = (model ?? "the model").split("+");
  const base = titleOf(file);
  return adapter ? `${base} on this computer, with what it learned from your memories (adapter ${adapter})` : `${base} on this computer`;
};

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

// One turn: the question, the answer as it streams in (or what stood in for it), what a person
// can do with it, and the prompt it was answered from.
export function TurnView({
  entry: e,
  answering,
  onWrong,
  onForget,
  onOpenMemory,
}: {
  entry: Entry;
  answering: boolean;
  onWrong: () => void;
  onForget: () => void;
  onOpenMemory: (id: string) => void;
}) {
  return (
    <div className="turn">
      <div className="question">{e.question}</div>
      {e.gone ? null : e.answer ? (
        <div className={`answer ${e.wrong ? "wrong" : ""}`}>{e.answer}</div>
      ) : (
        answering && !e.error && <div className="answer thinking">Thinking…</div>
      )}
      {!e.turn && e.found && answering && (
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
      {!answering && <AnswerActions entry={e} onWrong={onWrong} onForget={onForget} />}
      {e.turn && !e.gone && <FilesUsed files={e.turn.files} />}
      {e.turn && !e.gone && <Why turn={e.turn} question={e.question} onOpenMemory={onOpenMemory} />}
      {!e.turn && e.by && <div className="by">Answered by {e.by}</div>}
    </div>
  );
}

// The prompt an answer came from: the budget, the memories used (each opens, each can be
// rated), who answered, and the same question asked without memories.
function Why({ turn, question, onOpenMemory }: { turn: Turn; question: string; onOpenMemory: (id: string) => void }) {
  return (
    <div className="why">
      <Budget turn={turn} />
      <div className="injected">
        <strong>Memories used ({turn.injected.length})</strong>
        <ul>
          {turn.injected.map((m) => (
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
          Answered by {answeredBy(turn.provider, turn.model)}
          {turn.recorded_id ? " · remembered in this conversation" : ""}
        </div>
        <Compare question={question} model={turn.model} budget={turn.budget} onOpenMemory={onOpenMemory} />
      </div>
    </div>
  );
}
