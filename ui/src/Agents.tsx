import { useEffect, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import { commands, type AgentEvent, type AgentView, type AgentRunView, type AgentStepView, type Exchange } from "./bindings";
import { failed, useLoaded } from "./loaded";
import { AgentForm } from "./AgentForm";
import { count, day } from "./format";

let counter = 0;

// One step of a run, in the words the person reads.
export function stepWords(s: AgentStepView): string {
  const cut = (t: string, n: number) => (t.length > n ? `${t.slice(0, n)}…` : t);
  if (s.kind === "reply" && s.result.trim() === "") return `${s.agent} thinks (${s.name})`;
  if (s.kind === "reply") return `${s.agent} says${s.failed ? " (failed)" : ""}: ${cut(s.result, 400)}`;
  if (s.kind === "handoff") return `${s.agent} hands the task to ${s.name}`;
  const args = s.arguments && s.arguments !== "{}" ? ` ${cut(s.arguments, 120)}` : "";
  return `${s.agent} uses ${s.name}${args}${s.failed ? " (failed)" : ""} → ${cut(s.result, 240)}`;
}

// How a run ended, in words.
const OUTCOMES: Record<string, string> = {
  answered: "Answered",
  step_limit: "Stopped at the step limit",
  cancelled: "Stopped by you",
  failed: "Failed",
  "": "Running, or stopped without an end",
};

// A run's steps, one after another, each with who acted, what it did, and its time.
export function Timeline({ steps }: { steps: AgentStepView[] }) {
  return (
    <ol className="timeline" aria-label="Steps">
      {steps.map((s) => (
        <li key={s.seq} className={`step step-${s.kind}${s.failed ? " step-failed" : ""}`}>
          <span className="step-text">{stepWords(s)}</span>
          <span className="muted step-meta">
            {s.ms >= 1000 ? `${(s.ms / 1000).toFixed(1)} s` : `${s.ms} ms`}
            {s.tokens > 0 ? ` · ${s.tokens} tokens` : ""}
          </span>
        </li>
      ))}
    </ol>
  );
}

type Asking = { id: string; server: string; tool: string; arguments: string };

// A chat with an agent: each task (after the earlier ones and their answers) shows its steps as
// they are recorded; Stop; a tool that asks first is asked about here.
function RunTask({ agent, onRan }: { agent: AgentView; onRan: () => void }) {
  const [task, setTask] = useState("");
  const [chat, setChat] = useState<Exchange[]>([]);
  const [job, setJob] = useState<string | null>(null);
  const [steps, setSteps] = useState<AgentStepView[]>([]);
  const [asking, setAsking] = useState<Asking | null>(null);
  const [result, setResult] = useState<AgentRunView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    if (!task.trim() || job) return;
    const id = `agent-${Date.now()}-${counter++}`;
    const channel = new Channel<AgentEvent>();
    channel.onmessage = (e) => {
      if (e.kind === "step") setSteps((all) => [...all, e.value]);
      else setAsking(e.value);
    };
    setSteps([]);
    setResult(null);
    setError(null);
    setJob(id);
    try {
      const res = await commands.runAgent(id, agent.name, task, chat, channel);
      if (!failed(res, setError)) {
        setResult(res.data);
        if (res.data.outcome === "answered") {
          setChat([...chat, { task, agent: res.data.last_agent, answer: res.data.answer }]);
          setTask("");
        }
      }
    } finally {
      setJob(null);
      setAsking(null);
      onRan();
    }
  };
  const answer = async (allow: boolean) => {
    if (!asking) return;
    const id = asking.id;
    setAsking(null);
    await commands.answerToolRequest(id, allow);
  };
  return (
    <section className="agent-run" aria-label="Give a task">
      {chat.length > 0 && (
        <ol className="agent-chat" id="agent-chat" aria-label="This conversation">
          {chat.map((x, i) => (
            <li key={i}>
              <div className="said">{x.task}</div>
              <div className="answered">
                <span className="muted">{x.agent}: </span>
                {x.answer}
              </div>
            </li>
          ))}
        </ol>
      )}
      <textarea
        id="agent-task"
        rows={3}
        value={task}
        placeholder={chat.length > 0 ? `Go on with ${agent.name}…` : `What should ${agent.name} do?`}
        onChange={(e) => setTask(e.target.value)}
      />
      <div className="row">
        <button id="agent-run" onClick={run} disabled={!!job || !task.trim()}>
          {job ? "Working…" : chat.length > 0 ? "Send" : "Give the task"}
        </button>
        {chat.length > 0 && !job && (
          <button id="agent-new-chat" onClick={() => (setChat([]), setSteps([]), setResult(null))}>
            New conversation
          </button>
        )}
        {job && (
          <button id="agent-stop" onClick={() => commands.cancelJob(job)}>
            Stop
          </button>
        )}
      </div>
      {asking && (
        <div className="notice ask" role="alertdialog" id="agent-ask">
          <div>
            {agent.name} wants to use <b>{asking.tool}</b> of your server {asking.server}
            {asking.arguments && asking.arguments !== "{}" ? ` with ${asking.arguments}` : ""}. Allow it?
          </div>
          <div className="row">
            <button id="agent-ask-allow" onClick={() => answer(true)}>
              Allow this time
            </button>
            <button id="agent-ask-deny" onClick={() => answer(false)}>
              Don't allow
            </button>
          </div>
        </div>
      )}
      {error && (
        <div className="error" role="alert" id="agent-error">
          {error}
        </div>
      )}
      {steps.length > 0 && <Timeline steps={steps} />}
      {result && result.outcome !== "answered" && (
        <div className="answer stopped" id="agent-answer">
          <div className="muted">{OUTCOMES[result.outcome] ?? result.outcome}</div>
          <div className="answer-text">{result.answer}</div>
        </div>
      )}
    </section>
  );
}

// The runs an agent was given, newest first; one opened shows its timeline.
function Runs({ agent, version }: { agent: string; version: number }) {
  const { data: runs, error, reload } = useLoaded(true, () => commands.agentRuns(agent), [version]);
  const [open, setOpen] = useState<string | null>(null);
  const [steps, setSteps] = useState<AgentStepView[] | null>(null);
  useEffect(() => {
    setSteps(null);
    if (open) commands.agentRunSteps(open).then((r) => r.status === "ok" && setSteps(r.data));
  }, [open]);
  const forget = async (id: string) => {
    await commands.forgetAgentRun(id);
    setOpen(null);
    reload();
  };
  if (error) return <div className="error">{error}</div>;
  if (!runs) return null;
  if (runs.length === 0) return <div className="empty">No tasks yet. What you give {agent} is kept here, step by step.</div>;
  return (
    <ul className="runs" aria-label="Earlier tasks" id="agent-runs">
      {runs.map((r) => (
        <li key={r.id}>
          <button className={`link ${r.id === open ? "current" : ""}`} onClick={() => setOpen(r.id === open ? null : r.id)}>
            <span>{r.task}</span>
            <span className="muted">
              {day(r.started)} · {OUTCOMES[r.outcome] ?? r.outcome}
              {r.tokens > 0 ? ` · ${count(r.tokens, "token", "tokens")}` : ""}
            </span>
          </button>
          {r.id === open && (
            <div className="run-detail">
              {steps && <Timeline steps={steps} />}
              {r.answer && <div className="answer">{r.answer}</div>}
              <button className="link danger" onClick={() => forget(r.id)}>
                Forget this task
              </button>
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}

// The Agents screen: the person's agents; one opened can be given a task, changed, forgotten,
// and its earlier tasks read step by step.
export function Agents({ active }: { active: boolean }) {
  const { data: list, error, reload } = useLoaded(active, () => commands.agents());
  const [open, setOpen] = useState<string | null>(null);
  const [editing, setEditing] = useState<"new" | "change" | null>(null);
  const [ran, setRan] = useState(0);
  const [said, setSaid] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const shown = list?.find((a) => a.name === open) ?? null;
  const forget = async (a: AgentView) => {
    setConfirming(false);
    const res = await commands.forgetAgent(a.name);
    if (res.status === "ok") setSaid(`Forgot ${a.name}, its earlier versions and ${count(res.data, "task", "tasks")} it took part in.`);
    setOpen(null);
    reload();
  };
  return (
    <div className="agents" id="agents">
      <div className="screen-head">
        <h2>Your agents</h2>
        <button id="agent-new" onClick={() => (setEditing("new"), setOpen(null))}>
          New agent…
        </button>
      </div>
      <p className="muted intro">
        Assistants with their own instructions, memories and tools. Give one a task: it may look things up, keep what it
        learns, use your files and servers, and hand the task to another agent. Every step is kept, and you can read it here.
      </p>
      {error && <div className="error">{error}</div>}
      {said && <div className="notice">{said}</div>}
      {list && list.length === 0 && !editing && (
        <div className="empty" id="agents-empty">
          No agents yet. Make one with New agent: a name, what it is for, and the tools it may use.
        </div>
      )}
      <div className="agents-body">
        <ul className="agent-list" aria-label="Agents">
          {list?.map((a) => (
            <li key={a.name}>
              <button
                className={`link ${a.name === open ? "current" : ""}`}
                id={`agent-${a.name.replace(/\s+/g, "-")}`}
                onClick={() => (setOpen(a.name), setEditing(null), setSaid(null), setConfirming(false))}
              >
                <span className="agent-name">{a.name}</span>
                <span className="muted">{a.spec.description || "No description"}</span>
              </button>
            </li>
          ))}
        </ul>
        <div className="agent-page">
          {editing === "new" && (
            <AgentForm
              agents={list ?? []}
              onSaved={(a) => (reload(), setEditing(null), setOpen(a.name))}
              onCancel={() => setEditing(null)}
            />
          )}
          {shown && editing === "change" && (
            <AgentForm
              agents={list ?? []}
              agent={shown}
              onSaved={() => (reload(), setEditing(null))}
              onCancel={() => setEditing(null)}
            />
          )}
          {shown && editing === null && (
            <>
              <div className="agent-head">
                <h3>{shown.name}</h3>
                <span className="muted">
                  {shown.spec.model ? shown.spec.model : "On this computer"} ·{" "}
                  {(shown.spec.tools ?? []).length > 0 ? (shown.spec.tools ?? []).join(", ") : "no tools"}
                  {(shown.spec.handoffs ?? []).length > 0 ? ` · hands tasks to ${(shown.spec.handoffs ?? []).join(", ")}` : ""}
                </span>
                <button id="agent-change" onClick={() => setEditing("change")}>
                  Change…
                </button>
                <button className="danger" id="agent-forget" onClick={() => setConfirming(true)}>
                  Forget…
                </button>
              </div>
              {confirming && (
                <div className="confirm" role="alertdialog" id="agent-forget-confirm">
                  Forget {shown.name}? Its definition, its earlier versions and every task it took part in are erased. The
                  memories it kept stay, to forget one by one. This cannot be undone.{" "}
                  <button className="danger" id="agent-forget-yes" onClick={() => forget(shown)}>
                    Forget it
                  </button>{" "}
                  <button onClick={() => setConfirming(false)} autoFocus>
                    Keep it
                  </button>
                </div>
              )}
              <RunTask key={shown.name} agent={shown} onRan={() => setRan((n) => n + 1)} />
              <h4>Earlier tasks</h4>
              <Runs key={`${shown.name}-runs`} agent={shown.name} version={ran} />
            </>
          )}
        </div>
      </div>
    </div>
  );
}
