import { useEffect, useState } from "react";
import { commands, type AgentSpec, type AgentView, type SharedAccess, type ToolChoice } from "./bindings";
import { failed } from "./loaded";

// A definition with every field filled (a stored one may leave some to their defaults).
function full(s?: AgentSpec) {
  return {
    description: s?.description ?? "",
    instructions: s?.instructions ?? "",
    model: s?.model ?? null,
    tools: s?.tools ?? ["recall", "remember"],
    handoffs: s?.handoffs ?? [],
    shared: (s?.shared ?? "write") as SharedAccess,
  };
}
type Spec = ReturnType<typeof full>;

const SHARED: { value: SharedAccess; words: string }[] = [
  { value: "write", words: "Reads and adds to the memories your agents share" },
  { value: "read", words: "Reads the shared memories, keeps its own apart" },
  { value: "none", words: "Only its own memories" },
];

// Making an agent, or changing one: what it is for, its instructions, the model that thinks
// for it, the tools it may use, the agents it may hand a task to, and the shared memories.
export function AgentForm({
  agents,
  agent,
  onSaved,
  onCancel,
}: {
  agents: AgentView[];
  agent?: AgentView;
  onSaved: (a: AgentView) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState(agent?.name ?? "");
  const [spec, setSpec] = useState<Spec>(full(agent?.spec));
  const [tools, setTools] = useState<ToolChoice[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    commands.agentTools().then((r) => r.status === "ok" && setTools(r.data));
  }, []);
  const set = (change: Partial<Spec>) => setSpec({ ...spec, ...change });
  const toggle = (list: string[], item: string) => (list.includes(item) ? list.filter((t) => t !== item) : [...list, item]);
  const save = async () => {
    setError(null);
    const res = await commands.saveAgent(name.trim(), spec, agent ? agent.version : null);
    if (!failed(res, setError)) onSaved(res.data);
  };
  const others = agents.filter((a) => a.name !== agent?.name);
  return (
    <form className="agent-form" id="agent-form" onSubmit={(e) => (e.preventDefault(), save())}>
      <h3>{agent ? `Change ${agent.name}` : "A new agent"}</h3>
      {!agent && (
        <label>
          Name
          <input id="agent-name" value={name} onChange={(e) => setName(e.target.value)} placeholder="Booker" autoFocus />
        </label>
      )}
      <label>
        What it is for
        <input
          id="agent-description"
          value={spec.description}
          onChange={(e) => set({ description: e.target.value })}
          placeholder="Books trips and remembers their dates"
        />
      </label>
      <label>
        Its instructions
        <textarea
          id="agent-instructions"
          rows={4}
          value={spec.instructions}
          onChange={(e) => set({ instructions: e.target.value })}
          placeholder="Be brief. Keep every date you are told."
        />
      </label>
      <label>
        Who thinks for it
        <input
          id="agent-model"
          value={spec.model ?? ""}
          onChange={(e) => set({ model: e.target.value.trim() === "" ? null : e.target.value })}
          placeholder="Empty: the model on this computer. Or a provider's, like openai:gpt-4o-mini"
        />
      </label>
      <fieldset>
        <legend>Tools it may use</legend>
        {tools.map((t) => (
          <label key={t.name} className="check">
            <input
              type="checkbox"
              id={`agent-tool-${t.name.replace(/\W/g, "-")}`}
              checked={spec.tools.includes(t.name)}
              onChange={() => set({ tools: toggle(spec.tools, t.name) })}
            />
            {t.name} <span className="muted">{t.what}</span>
          </label>
        ))}
      </fieldset>
      {others.length > 0 && (
        <fieldset>
          <legend>Agents it may hand a task to</legend>
          {others.map((a) => (
            <label key={a.name} className="check">
              <input
                type="checkbox"
                checked={spec.handoffs.includes(a.name)}
                onChange={() => set({ handoffs: toggle(spec.handoffs, a.name) })}
              />
              {a.name} <span className="muted">{a.spec.description}</span>
            </label>
          ))}
        </fieldset>
      )}
      <label>
        Shared memories
        <select id="agent-shared" value={spec.shared} onChange={(e) => set({ shared: e.target.value as SharedAccess })}>
          {SHARED.map((s) => (
            <option key={s.value} value={s.value}>
              {s.words}
            </option>
          ))}
        </select>
      </label>
      {error && (
        <div className="error" role="alert" id="agent-form-error">
          {error}
        </div>
      )}
      <div className="row">
        <button type="submit" id="agent-save" disabled={!agent && name.trim() === ""}>
          {agent ? "Save the change" : "Make the agent"}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
