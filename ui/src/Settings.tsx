import { useEffect, useState } from "react";
import { commands, type SettingsView } from "./bindings";
import { describe } from "./errors";

// Where Strata keeps things, and the MCP server for other AI tools (Claude Desktop, Cursor…)
// with the address and token to paste into their configuration.
export function Settings() {
  const [view, setView] = useState<SettingsView | null>(null);
  const [port, setPort] = useState("8765");
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    commands.settings().then((r) => (r.status === "ok" ? setView(r.data) : setError(describe(r.error))));
  }, []);

  const toggle = async (on: boolean) => {
    const res = await commands.setMcp(on, Number(port) || 0);
    if (res.status === "ok") {
      setView(res.data);
      setError(null);
    } else setError(describe(res.error));
  };

  const copy = (text: string) => navigator.clipboard?.writeText(text);

  if (!view) return <div className="empty">{error ?? "Loading…"}</div>;
  const config = view.mcp
    ? JSON.stringify({ mcpServers: { strata: { url: view.mcp.url, headers: { Authorization: `Bearer ${view.mcp.token}` } } } }, null, 2)
    : "";
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
        </dl>
      </section>
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
                <code id="mcp-token">{view.mcp.token}</code> <button onClick={() => copy(view.mcp!.token)}>Copy</button>
              </dd>
            </dl>
            <p className="muted">Client configuration:</p>
            <pre>{config}</pre>
            <button onClick={() => copy(config)}>Copy configuration</button>
          </div>
        )}
      </section>
      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}
    </div>
  );
}
