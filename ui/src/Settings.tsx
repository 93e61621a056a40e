import { useEffect, useState } from "react";
import { commands, type ProviderView_Serialize as ProviderView, type Settings, type SettingsView_Serialize as SettingsView, type StoreView } from "./bindings";
import { answered, failed } from "./loaded";
import { count } from "./format";
import { McpServers } from "./McpServers";
import { Plugins } from "./Plugins";
import { OnDeviceModels } from "./Models";
import { StoreChoice } from "./StoreChoice";
import { Tiers } from "./Tiers";
import { ScheduleSettingsForm } from "./TrainingSchedule";

// Where Strata keeps things; model providers and their keys (in the OS keychain); the tier
// rule's thresholds, maintenance and re-embedding; and the MCP server for other AI tools
// (Claude Desktop, Cursor…) with the address and token to paste into their configuration.
export function Settings({ store, onStoreChanged }: { store: StoreView | null; onStoreChanged: (v: StoreView) => void }) {
  const [view, setView] = useState<SettingsView | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    answered(commands.settings(), setView, setError);
  }, []);

  if (!view) return <div className="empty">{error ?? "Loading…"}</div>;
  return (
    <div className="settings">
      <h2>Settings</h2>
      <section>
        <h3>Where things are</h3>
        <dl>
          <dt>This computer's file</dt>
          <dd id="database">{view.database}</dd>
          <dt>Models</dt>
          <dd>
            {view.models}
            <div className="muted">
              {view.embedder_present
                ? "search by meaning is ready"
                : "search by meaning is missing: run make setup"}
            </div>
          </dd>
          <dt>Settings file</dt>
          <dd>{view.settings_file}</dd>
        </dl>
      </section>
      <StoreChoice view={store} onChanged={onStoreChanged} />
      <OnDeviceModels initial={view.on_device} />
      <Providers />
      <Extraction view={view} onSaved={setView} />
      <UsageRecords view={view} onSaved={setView} />
      <TrainingCriteria view={view} onSaved={setView} />
      <ScheduleSettingsForm view={view} onSaved={setView} />
      <Tiers view={view} onSaved={setView} />
      <Mcp view={view} onChanged={setView} />
      <McpServers />
      <Plugins />
    </div>
  );
}

const LABELS: Record<string, string> = {
  openai: "OpenAI",
  anthropic: "Anthropic",
  ollama: "Ollama",
  "openai-compatible": "OpenAI-compatible server (LiteLLM, vLLM, LM Studio…)",
};

// Each provider: where its key comes from (never the key), and a field to file one in the
// OS keychain or remove it.
function Providers() {
  const [providers, setProviders] = useState<ProviderView[]>([]);
  const [keys, setKeys] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  // The person's own chat models (Settings → Plugins) take no key here.
  const served = (all: ProviderView[]) => setProviders(all.filter((p) => !p.plugin));
  useEffect(() => {
    answered(commands.providers(), served, setError);
  }, []);

  const save = async (name: string, key: string) => {
    const res = await commands.setKey(name, key);
    setNotice(null);
    setError(null);
    if (failed(res, setError)) return;
    served(res.data);
    setKeys((k) => ({ ...k, [name]: "" }));
    setNotice(key ? `The ${LABELS[name] ?? name} key is in the OS keychain.` : `The ${LABELS[name] ?? name} key was removed.`);
  };

  const where = (p: ProviderView) =>
    !p.key_variable
      ? "no key needed"
      : p.key_from === "environment"
        ? `key from ${p.key_variable}`
        : p.key_from === "keychain"
          ? "key in the OS keychain"
          : p.needs_key
            ? "no key yet"
            : "no key (optional)";

  return (
    <section>
      <h3>Model providers</h3>
      <p className="muted">Chat works with the on-device model and no key. Keys for other providers are kept in your OS keychain, never in Strata's files.</p>
      <table className="providers">
        <tbody>
          {providers.map((p) => (
            <tr key={p.name} id={`provider-${p.name}`}>
              <th>{LABELS[p.name] ?? p.name}</th>
              <td className="key-status">{where(p)}</td>
              <td>
                {p.key_variable && (
                  <form
                    onSubmit={(e) => {
                      e.preventDefault();
                      save(p.name, keys[p.name] ?? "");
                    }}
                  >
                    <input
                      type="password"
                      name={`key-${p.name}`}
                      value={keys[p.name] ?? ""}
                      onChange={(e) => setKeys((k) => ({ ...k, [p.name]: e.target.value }))}
                      placeholder="Paste a key"
                      autoComplete="off"
                    />{" "}
                    <button type="submit" disabled={!(keys[p.name] ?? "").trim()}>
                      Save key
                    </button>{" "}
                    {p.key_from === "keychain" && (
                      <button type="button" className="remove-key" onClick={() => save(p.name, "")}>
                        Remove
                      </button>
                    )}
                  </form>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {notice && (
        <div className="notice" id="keys-notice">
          {notice}
        </div>
      )}
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}

// Saves the settings; what was saved goes to `onSaved`, a refusal (a bad value) to `onError`.
async function saveSettings(next: Settings, onSaved: (v: SettingsView) => void, onError: (e: string | null) => void) {
  const res = await commands.saveSettings(next);
  if (failed(res, onError)) return;
  onSaved(res.data);
  onError(null);
}

// Whether Strata reads conversations for facts after each answer, and whether what it finds
// waits for the person's review.
function Extraction({ view, onSaved }: { view: SettingsView; onSaved: (v: SettingsView) => void }) {
  const [error, setError] = useState<string | null>(null);
  const extraction = view.saved.extraction;
  const save = (next: typeof extraction) => saveSettings({ ...view.saved, extraction: next }, onSaved, setError);
  return (
    <section className="extraction">
      <h3>Facts from conversations</h3>
      <label className="switch">
        <input
          id="extraction-on"
          type="checkbox"
          checked={extraction.after_exchanges}
          onChange={(e) => save({ ...extraction, after_exchanges: e.target.checked })}
        />{" "}
        After each answer, look in the conversation for facts worth remembering
      </label>
      <label className="field">
        When Strata finds a fact{" "}
        <select
          id="extraction-review"
          value={extraction.review ?? "model"}
          disabled={!extraction.after_exchanges}
          onChange={(e) => save({ ...extraction, review: e.target.value === "model" ? null : (e.target.value as "apply" | "propose") })}
        >
          <option value="model">Ask me first with the on-device model, remember at once with a provider's</option>
          <option value="propose">Always ask me first</option>
          <option value="apply">Always remember it at once</option>
        </select>
      </label>
      <p className="muted">
        The on-device model is small and often wrong about facts, so what it finds waits on the Facts screen until you accept it.
      </p>
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}

// What makes a memory worth teaching the on-device model (the Training screen's list).
function TrainingCriteria({ view, onSaved }: { view: SettingsView; onSaved: (v: SettingsView) => void }) {
  const c = view.saved.training.criteria;
  const [form, setForm] = useState({
    importance: String(c.min_importance),
    recalls: String(c.min_recalls),
    days: String(c.stable_days),
  });
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  // Each change is saved as it is made (a number when it is left or Enter is pressed), and
  // says so.
  const save = (next: Partial<typeof c>, what: string) =>
    saveSettings(
      { ...view.saved, training: { ...view.saved.training, criteria: { ...c, ...next } } },
      (v) => {
        onSaved(v);
        setSaved(`Saved: ${what}.`);
      },
      setError,
    );
  const field = (id: string, key: keyof typeof form, label: string, apply: (v: number) => Partial<typeof c>, step = "1") => {
    const commit = () => {
      const v = apply(Number(form[key]));
      if (Object.entries(v).some(([k, x]) => c[k as keyof typeof c] !== x)) save(v, `${label.toLowerCase()}: ${form[key]}`);
    };
    return (
      <label className="field">
        <span>{label}</span>
        <input
          id={id}
          type="number"
          min={0}
          step={step}
          value={form[key]}
          onChange={(e) => setForm({ ...form, [key]: e.target.value })}
          onBlur={commit}
          onKeyDown={(e) => e.key === "Enter" && commit()}
        />
      </label>
    );
  };
  return (
    <section className="criteria">
      <h3>Training: what is worth teaching</h3>
      <p className="muted">
        A fact or procedure is listed on the Training screen when it meets all of these. Nothing is taught until you approve it.
      </p>
      <label className="switch">
        <input id="criteria-long-term" type="checkbox" checked={c.long_term_only} onChange={(e) => save({ long_term_only: e.target.checked }, e.target.checked ? "only long-term memories" : "memories of every tier")} />{" "}
        Only long-term memories
      </label>
      {field("criteria-importance", "importance", "At least this important (0 to 1)", (v) => ({ min_importance: v }), "0.05")}
      {field("criteria-recalls", "recalls", "Recalled at least this many times", (v) => ({ min_recalls: Math.round(v) }))}
      {field("criteria-days", "days", "Unchanged for at least this many days", (v) => ({ stable_days: Math.round(v) }))}
      <label className="switch">
        <input
          id="criteria-accepted"
          type="checkbox"
          checked={c.extracted_need_acceptance}
          onChange={(e) =>
            save(
              { extracted_need_acceptance: e.target.checked },
              e.target.checked ? "facts from conversations need your acceptance first" : "facts from conversations need no acceptance",
            )
          }
        />{" "}
        A fact found in a conversation must have been accepted by you first
      </label>
      <p className="muted">Always: nothing else says otherwise, and the on-device model has not already learned it.</p>
      {saved && !error && (
        <p className="notice" id="criteria-saved" role="status">
          {saved}
        </p>
      )}
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}

// Whether Analytics keeps a record of searches, prompts and ratings, for how long, and clearing
// what it kept.
function UsageRecords({ view, onSaved }: { view: SettingsView; onSaved: (v: SettingsView) => void }) {
  const usage = view.saved.usage;
  const [days, setDays] = useState(String(usage.days));
  const [error, setError] = useState<string | null>(null);
  const [cleared, setCleared] = useState<string | null>(null);
  const save = (next: typeof usage) => saveSettings({ ...view.saved, usage: next }, onSaved, setError);
  const clear = async () => {
    const res = await commands.clearUsageRecords();
    if (!failed(res, setError)) setCleared(`Deleted the records of ${count(res.data, "search or prompt", "searches and prompts")}.`);
  };
  return (
    <section className="usage">
      <h3>Usage records</h3>
      <label className="switch">
        <input id="usage-on" type="checkbox" checked={usage.keep} onChange={(e) => save({ ...usage, keep: e.target.checked, days: Number(days) || usage.days })} />{" "}
        Keep a record of searches, prompts and what you rate, for Analytics
      </label>
      <label className="field">
        Keep them for{" "}
        <input
          id="usage-days"
          type="number"
          min={1}
          max={3650}
          value={days}
          disabled={!usage.keep}
          onChange={(e) => setDays(e.target.value)}
          onBlur={() => save({ ...usage, days: Number(days) })}
        />{" "}
        days
      </label>
      <p className="muted">
        They stay on this computer. Forgetting a memory deletes every record that mentions it.{" "}
        <button id="usage-clear" onClick={clear}>
          Clear them now
        </button>
      </p>
      {cleared && (
        <p className="notice" id="usage-cleared">
          {cleared}
        </p>
      )}
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}

function Mcp({ view, onChanged }: { view: SettingsView; onChanged: (v: SettingsView) => void }) {
  const [port, setPort] = useState("8765");
  const [error, setError] = useState<string | null>(null);
  const [revealed, setRevealed] = useState(false);
  const [copied, setCopied] = useState<string | null>(null);

  const toggle = async (on: boolean) => {
    const res = await commands.setMcp(on, Number(port) || 0);
    if (failed(res, setError)) return;
    onChanged(res.data);
    setError(null);
  };

  // Says what happened either way: copied, or how to copy it by hand (no clipboard here).
  const copy = (text: string, what: string) => {
    const failed = () => setCopied(`Could not copy the ${what.toLowerCase()}; show it and select it instead.`);
    if (!navigator.clipboard) return failed();
    navigator.clipboard.writeText(text).then(() => setCopied(`${what} copied.`), failed);
  };
  // The token opens these memories to whoever has it: hidden unless asked for, copied whole.
  const token = view.mcp?.token ?? "";
  const shown = revealed ? token : `${"•".repeat(12)}${token.slice(-4)}`;
  const config = (t: string) =>
    view.mcp ? JSON.stringify({ mcpServers: { strata: { url: view.mcp.url, headers: { Authorization: `Bearer ${t}` } } } }, null, 2) : "";
  return (
    <section>
      <h3>MCP server</h3>
      <p className="muted">Let Claude Desktop, Cursor and other MCP clients use these memories over HTTP on this computer only.</p>
      <label className="switch">
        <input id="mcp-on" type="checkbox" checked={!!view.mcp} onChange={(e) => toggle(e.target.checked)} /> Let AI apps connect, on port{" "}
        <input className="port" value={port} onChange={(e) => setPort(e.target.value)} disabled={!!view.mcp} />
      </label>
      {view.mcp && (
        <div className="mcp">
          <dl>
            <dt>Address</dt>
            <dd id="mcp-url">{view.mcp.url}</dd>
            <dt>Token</dt>
            <dd>
              <code id="mcp-token">{shown}</code>{" "}
              <button id="mcp-reveal" onClick={() => setRevealed(!revealed)}>
                {revealed ? "Hide" : "Show"}
              </button>{" "}
              <button id="mcp-copy" onClick={() => copy(token, "Token")}>
                Copy
              </button>
            </dd>
          </dl>
          <p className="muted">Client configuration:</p>
          <pre id="mcp-config">{config(shown)}</pre>
          <button onClick={() => copy(config(token), "Configuration")}>Copy configuration</button>
          {copied && (
            <p className="muted" id="mcp-copied" role="status">
              {copied}
            </p>
          )}
        </div>
      )}
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}
