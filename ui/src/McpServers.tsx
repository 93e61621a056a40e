import { useEffect, useState } from "react";
import { commands, type McpServerView, type McpToolView } from "./bindings";
import { answered, failed } from "./loaded";

const POLICIES: { value: string; words: string }[] = [
  { value: "ask", words: "Ask me each time" },
  { value: "allowed", words: "Allowed" },
  { value: "never", words: "Never" },
];

// One server's tools, started to list them, each with its policy.
function Tools({ server }: { server: string }) {
  const [tools, setTools] = useState<McpToolView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    answered(commands.mcpServerTools(server), setTools, setError);
  }, [server]);
  const set = async (tool: string, policy: string) => {
    const res = await commands.setMcpToolPolicy(server, tool, policy);
    if (!failed(res, setError)) setTools((all) => all?.map((t) => (t.name === tool ? { ...t, policy } : t)) ?? null);
  };
  if (error) return <div className="error">{error}</div>;
  if (!tools) return <div className="muted">Starting {server} to see its tools…</div>;
  return (
    <table className="mcp-tools" id={`mcp-tools-${server}`}>
      <tbody>
        {tools.map((t) => (
          <tr key={t.name}>
            <td>
              {t.name}
              {t.read_only && <span className="muted"> (only reads)</span>}
              <div className="muted">{t.description}</div>
            </td>
            <td>
              <select value={t.policy} onChange={(e) => set(t.name, e.target.value)} aria-label={`When an agent uses ${t.name}`}>
                {POLICIES.map((p) => (
                  <option key={p.value} value={p.value}>
                    {p.words}
                  </option>
                ))}
              </select>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

// Settings → Your MCP servers: the servers whose tools your agents may use.
export function McpServers() {
  const [servers, setServers] = useState<McpServerView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [said, setSaid] = useState<string[]>([]);
  const [name, setName] = useState("");
  const [reached, setReached] = useState("");
  const [open, setOpen] = useState<string | null>(null);
  useEffect(() => {
    answered(commands.mcpServers(), setServers, setError);
  }, []);
  const add = async () => {
    setError(null);
    const res = await commands.addMcpServer(name, reached);
    if (failed(res, setError)) return;
    setServers(res.data);
    setSaid([`Added ${name.trim()}. Its tools ask you each time an agent uses one, until you choose otherwise.`]);
    setName("");
    setReached("");
  };
  const importThem = async () => {
    setError(null);
    const res = await commands.importMcpServers();
    if (failed(res, setError)) return;
    setServers(res.data.servers);
    setSaid(res.data.said);
  };
  const remove = async (server: string) => {
    const res = await commands.removeMcpServer(server);
    if (!failed(res, setError)) setServers(res.data);
  };
  return (
    <section className="mcp-servers" id="mcp-servers">
      <h3>Your MCP servers</h3>
      <p className="muted">
        Programs and services your agents may use as tools (the same kind Claude Desktop and Cursor use). A server starts only
        when an agent that may use it works on a task.
      </p>
      {servers && servers.length === 0 && <p id="mcp-servers-empty">No servers yet.</p>}
      <ul className="mcp-server-list">
        {servers?.map((s) => (
          <li key={s.name}>
            <div className="row">
              <b>{s.name}</b> <code>{s.reached}</code>{" "}
              <button onClick={() => setOpen(open === s.name ? null : s.name)} id={`mcp-server-tools-${s.name}`}>
                {open === s.name ? "Hide its tools" : "Its tools…"}
              </button>{" "}
              <button className="link danger" onClick={() => remove(s.name)}>
                Remove
              </button>
            </div>
            {open === s.name && <Tools server={s.name} />}
          </li>
        ))}
      </ul>
      <form className="row" onSubmit={(e) => (e.preventDefault(), add())}>
        <input id="mcp-server-name" value={name} onChange={(e) => setName(e.target.value)} placeholder="A name: files" />
        <input
          id="mcp-server-reached"
          value={reached}
          onChange={(e) => setReached(e.target.value)}
          placeholder="npx -y @modelcontextprotocol/server-filesystem ~/Documents, or https://…"
        />
        <button type="submit" id="mcp-server-add" disabled={!name.trim() || !reached.trim()}>
          Add
        </button>
      </form>
      <button id="mcp-servers-import" onClick={importThem}>
        Bring in the servers of Claude Desktop and Cursor
      </button>
      {said.length > 0 && (
        <div className="notice" id="mcp-servers-said">
          {said.map((s) => (
            <div key={s}>{s}</div>
          ))}
        </div>
      )}
      {error && (
        <div className="error" role="alert" id="mcp-servers-error">
          {error}
        </div>
      )}
    </section>
  );
}
