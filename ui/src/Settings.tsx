import { useEffect, useState } from "react";
import { commands, type MoveView, type ProviderView_Serialize as ProviderView, type SettingsView_Serialize as SettingsView, type TierPolicyShape } from "./bindings";
import { describe } from "./errors";
import { JobBar, useJob } from "./jobs";

// Where Strata keeps things; model providers and their keys (in the OS keychain); the tier
// rule's thresholds, maintenance and re-embedding; and the MCP server for other AI tools
// (Claude Desktop, Cursor…) with the address and token to paste into their configuration.
export function Settings() {
  const [view, setView] = useState<SettingsView | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    commands.settings().then((r) => (r.status === "ok" ? setView(r.data) : setError(describe(r.error))));
  }, []);

  if (!view) return <div className="empty">{error ?? "Loading…"}</div>;
  return (
    <div className="settings">
      <h2>Settings</h2>
      <section>
        <h3>Where things are</h3>
        <dl>
          <dt>Database</dt>
          <dd id="database">{view.database}</dd>
          <dt>Models</dt>
          <dd>
            {view.models}
            <div className="muted">
              embeddings {view.embedder_present ? "ready" : "missing — run make setup"} · chat model{" "}
              {view.chat_model_present ? "ready" : "missing — run make setup"}
            </div>
          </dd>
          <dt>Settings file</dt>
          <dd>{view.settings_file}</dd>
        </dl>
      </section>
      <Providers />
      <Tiers view={view} onSaved={setView} />
      <Mcp view={view} onChanged={setView} />
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

  useEffect(() => {
    commands.providers().then((r) => (r.status === "ok" ? setProviders(r.data) : setError(describe(r.error))));
  }, []);

  const save = async (name: string, key: string) => {
    const res = await commands.setKey(name, key);
    if (res.status === "ok") {
      setProviders(res.data);
      setKeys((k) => ({ ...k, [name]: "" }));
      setError(null);
      setNotice(key ? `The ${LABELS[name] ?? name} key is in the OS keychain.` : `The ${LABELS[name] ?? name} key was removed.`);
    } else {
      setNotice(null);
      setError(describe(res.error));
    }
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

type TierField = { key: keyof TierPolicyShape; label: string; step: string };

const TIER_FIELDS: TierField[] = [
  { key: "promote_to_long", label: "Promote to long-term at value", step: "0.05" },
  { key: "promote_min_accesses", label: "… after this many recalls", step: "1" },
  { key: "demote_below", label: "Demote long-term below value", step: "0.05" },
  { key: "long_idle_days", label: "… after this many idle days", step: "1" },
  { key: "expire_below", label: "Expire short-term below value", step: "0.05" },
  { key: "working_memory_items", label: "Working memory: items per session", step: "1" },
  { key: "working_memory_tokens", label: "Working memory: tokens per session", step: "100" },
  { key: "short_ttl_hours", label: "Working memory: hours", step: "1" },
  { key: "importance_weight", label: "Weight of importance", step: "0.05" },
  { key: "frequency_weight", label: "Weight of use", step: "0.05" },
  { key: "recency_weight", label: "Weight of recency", step: "0.05" },
  { key: "half_life_days", label: "Recency half-life (days)", step: "1" },
  { key: "frequent_accesses", label: "Recalls that count as frequent", step: "1" },
];

// The tier rule's thresholds (saved for the app and `strata maintain`), maintenance run now
// or previewed, and re-embedding every memory — each a job with progress and Cancel.
function Tiers({ view, onSaved }: { view: SettingsView; onSaved: (v: SettingsView) => void }) {
  const [tiers, setTiers] = useState<Record<string, string>>(() =>
    Object.fromEntries(TIER_FIELDS.map((f) => [f.key, String(view.saved.tiers[f.key] ?? "")])),
  );
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [moves, setMoves] = useState<MoveView[] | null>(null);
  const job = useJob();

  const save = async () => {
    const next = { ...view.saved.tiers } as Record<string, number | null>;
    for (const f of TIER_FIELDS) {
      const v = Number(tiers[f.key]);
      if (tiers[f.key].trim() === "" || Number.isNaN(v)) {
        setError(`“${f.label}” needs a number.`);
        return;
      }
      next[f.key] = v;
    }
    const res = await commands.saveSettings({ ...view.saved, tiers: next as unknown as TierPolicyShape });
    if (res.status === "ok") {
      setError(null);
      setNotice("Saved. Maintenance uses these from now on.");
      onSaved(res.data);
    } else {
      setNotice(null);
      setError(describe(res.error));
    }
  };

  const maintain = async (apply: boolean) => {
    setError(null);
    setNotice(null);
    const res = await job.run(apply ? "Maintaining" : "Previewing", (id, ch) => commands.maintain(id, apply, ch));
    if (res.status === "ok") {
      setMoves(res.data);
      setNotice(
        res.data.length === 0
          ? "Every memory is in its tier; nothing to move."
          : `${apply ? "Moved" : "Would move"} ${res.data.length} ${res.data.length === 1 ? "memory" : "memories"}.`,
      );
    } else setError(describe(res.error));
  };

  const reembed = async () => {
    setError(null);
    setNotice(null);
    const res = await job.run("Embedding", (id, ch) => commands.reembed(id, ch));
    if (res.status === "ok") setNotice(res.data.total === 0 ? "Every memory already has its vector." : `Embedded ${res.data.done} memories.`);
    else setError(describe(res.error));
  };

  return (
    <section>
      <h3>Memory tiers</h3>
      <p className="muted">
        A memory's value is its weighted importance, use and recency (0 to 1). Maintenance moves memories between short-, medium- and long-term by
        these rules; pinned memories never move down, and nothing is deleted.
      </p>
      <div className="tier-form" id="tier-form">
        {TIER_FIELDS.map((f) => (
          <label key={f.key}>
            {f.label}
            <input
              type="number"
              step={f.step}
              name={`tier-${f.key}`}
              value={tiers[f.key]}
              onChange={(e) => setTiers((t) => ({ ...t, [f.key]: e.target.value }))}
            />
          </label>
        ))}
      </div>
      <div className="buttons">
        <button id="save-tiers" onClick={save}>
          Save thresholds
        </button>
        <button id="maintain-preview" onClick={() => maintain(false)} disabled={job.running}>
          Preview maintenance
        </button>
        <button id="maintain" onClick={() => maintain(true)} disabled={job.running}>
          Run maintenance now
        </button>
        <button id="reembed" onClick={reembed} disabled={job.running} title="After a model change or a large import">
          Embed missing memories
        </button>
      </div>
      <JobBar job={job} />
      {notice && (
        <div className="notice" id="tiers-notice">
          {notice}
        </div>
      )}
      {error && (
        <div className="error" role="alert" id="tiers-error">
          {error}
        </div>
      )}
      {moves && moves.length > 0 && (
        <table className="moves" id="moves">
          <tbody>
            {moves.slice(0, 50).map((m) => (
              <tr key={m.id}>
                <td>{m.change}</td>
                <td className="muted">{m.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
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
    if (res.status === "ok") {
      onChanged(res.data);
      setError(null);
    } else setError(describe(res.error));
  };

  const copy = (text: string, what: string) =>
    navigator.clipboard?.writeText(text).then(
      () => setCopied(`${what} copied.`),
      () => setCopied(`Could not copy the ${what.toLowerCase()}; show it and select it instead.`),
    );
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
        <input id="mcp-on" type="checkbox" checked={!!view.mcp} onChange={(e) => toggle(e.target.checked)} /> Serve MCP on port{" "}
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
