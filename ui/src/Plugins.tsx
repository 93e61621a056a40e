import { useEffect, useState } from "react";
import { commands, type PluginKind, type PluginView, type VectorModelView } from "./bindings";
import { JobBar, useJob } from "./jobs";
import { answered, failed } from "./loaded";

const KINDS: { kind: PluginKind; heading: string }[] = [
  { kind: "embedder", heading: "Search by meaning (embedders)" },
  { kind: "chat-model", heading: "Chat models" },
  { kind: "token-manager", heading: "Token counters" },
  { kind: "storage", heading: "Where memories are kept" },
  { kind: "dataset-loader", heading: "Files that become datasets" },
  { kind: "tool", heading: "Tools your agents may use" },
];

const STATES: Record<string, string> = {
  ready: "Ready",
  missing: "Missing",
  broken: "Not working",
  unchecked: "Not checked yet",
};

// One entry: its name, where it comes from, whether it works (and why not), and what can be
// done with it.
function Row({ p, onCheck, onRemove, onUse, busy }: {
  p: PluginView;
  onCheck: () => void;
  onRemove: () => void;
  onUse: () => void;
  busy: boolean;
}) {
  return (
    <tr className={`plugin ${p.state}`} id={`plugin-${p.kind}-${p.name}`}>
      <td>
        <b>{p.name}</b>
        {p.in_use && (
          <>
            {" "}
            <span className="badge">in use</span>
          </>
        )}
        <div className="muted">{p.source}</div>
      </td>
      <td className="plugin-state">{STATES[p.state] ?? p.state}</td>
      <td>{p.why || p.detail}</td>
      <td className="plugin-actions">
        {p.kind === "embedder" && !p.in_use && p.state !== "missing" && p.state !== "broken" && (
          <button onClick={onUse} disabled={busy}>
            Use for search
          </button>
        )}
        {(p.added || p.state === "unchecked") && <button onClick={onCheck}>Check</button>}
        {p.added && !p.in_use && (
          <button className="link danger" onClick={onRemove}>
            Remove
          </button>
        )}
      </td>
    </tr>
  );
}

// The form that adds an embedder or chat model at an endpoint, or a token counter's file.
function AddPlugin({ onAdded }: { onAdded: (p: PluginView) => void }) {
  const [kind, setKind] = useState<PluginKind>("embedder");
  const [name, setName] = useState("");
  const [provider, setProvider] = useState("ollama");
  const [url, setUrl] = useState("http://127.0.0.1:11434");
  const [model, setModel] = useState("");
  const [keyEnv, setKeyEnv] = useState("");
  const [file, setFile] = useState("");
  const [models, setModels] = useState("");
  const [error, setError] = useState<string | null>(null);
  const endpoint = kind !== "token-manager";
  const add = async () => {
    setError(null);
    const plugin = endpoint
      ? { name, kind, provider, url, model, key_env: keyEnv.trim() || null }
      : { name, kind, file, models };
    const res = await commands.addPlugin(plugin);
    if (failed(res, setError)) return;
    onAdded(res.data);
    setName("");
    setModel("");
    setFile("");
  };
  return (
    <form className="plugin-form" id="plugin-form" onSubmit={(e) => (e.preventDefault(), add())}>
      <h4>Add a plugin</h4>
      <div className="row">
        <select id="plugin-kind" value={kind} onChange={(e) => setKind(e.target.value as PluginKind)} aria-label="What it is">
          <option value="embedder">A model that makes search by meaning (an embedder)</option>
          <option value="chat-model">A model that answers (a chat model)</option>
          <option value="token-manager">A tokenizer file (a token counter)</option>
        </select>
        <input id="plugin-name" value={name} onChange={(e) => setName(e.target.value)} placeholder="A name: nomic" />
      </div>
      {endpoint && (
        <p className="muted" id="plugin-privacy">
          {kind === "embedder"
            ? "Used for search, it reads the text of every memory and file you keep: choose a server on this computer, or one you trust."
            : "It reads what you ask and the memories sent with it: choose a server on this computer, or one you trust."}
        </p>
      )}
      {endpoint ? (
        <div className="row">
          <select
            id="plugin-provider"
            value={provider}
            onChange={(e) => {
              setProvider(e.target.value);
              setUrl(e.target.value === "ollama" ? "http://127.0.0.1:11434" : "http://127.0.0.1:1234/v1");
            }}
            aria-label="Served by"
          >
            <option value="ollama">Ollama</option>
            <option value="openai-compatible">An OpenAI-compatible server (LM Studio, vLLM, LiteLLM…)</option>
          </select>
          <input id="plugin-url" value={url} onChange={(e) => setUrl(e.target.value)} aria-label="Its address" />
          <input id="plugin-model" value={model} onChange={(e) => setModel(e.target.value)} placeholder="Model: nomic-embed-text" />
          <input
            id="plugin-key-env"
            value={keyEnv}
            onChange={(e) => setKeyEnv(e.target.value)}
            placeholder="Key's environment variable (if it needs one)"
          />
        </div>
      ) : (
        <div className="row">
          <input id="plugin-file" value={file} onChange={(e) => setFile(e.target.value)} placeholder="/path/to/tokenizer.json or a .gguf" />
          <input id="plugin-models" value={models} onChange={(e) => setModels(e.target.value)} placeholder="Counts for: llama3*" />
        </div>
      )}
      <button type="submit" id="plugin-add" disabled={!name.trim()}>
        Add and check it
      </button>
      {error && (
        <div className="error" role="alert" id="plugin-error">
          {error}
        </div>
      )}
    </form>
  );
}

// Settings → Plugins: everything Strata can plug in, yours and its own, whether each works
// now, and which embedder search by meaning uses.
export function Plugins() {
  const [all, setAll] = useState<PluginView[] | null>(null);
  const [vectors, setVectors] = useState<VectorModelView[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const job = useJob();
  // Listed again, an entry tried before keeps what its check found (a listing tries nothing).
  const reload = async () => {
    await answered(commands.vectorModels(), setVectors);
    await answered(
      commands.plugins(),
      (fresh) =>
        setAll((old) =>
          fresh.map((p) => {
            const was = old?.find((o) => o.kind === p.kind && o.name === p.name && o.source === p.source);
            return p.state === "unchecked" && was && was.state !== "unchecked" ? { ...was, in_use: p.in_use } : p;
          }),
        ),
      setError,
    );
  };
  useEffect(() => {
    reload();
  }, []);
  const replace = (p: PluginView) =>
    setAll((xs) => xs?.map((x) => (x.kind === p.kind && x.name === p.name ? p : x)) ?? null);
  const check = async (p: PluginView) => {
    replace({ ...p, state: "unchecked", why: "", detail: "Checking…" });
    const res = await commands.checkPlugin(p);
    if (!failed(res, setError)) replace(res.data);
  };
  const checkAll = () => all?.filter((p) => p.added || p.state === "unchecked").forEach(check);
  const remove = async (p: PluginView) => {
    const res = await commands.removePlugin(p.name);
    if (!failed(res, setError)) reload();
  };
  const use = async (p: PluginView) => {
    setError(null);
    setSaid(null);
    const res = await job.run(`Switching search to ${p.name}`, (id, ch) => commands.useEmbedder(p.name, id, ch));
    if (!failed(res, setError)) setSaid(res.data);
    reload();
  };
  const added = async (p: PluginView) => {
    setSaid(p.state === "ready" ? `Added ${p.name}: it works.` : `Added ${p.name}, but it does not work yet: ${p.why}`);
    await reload();
    replace(p); // as it was just tried
  };
  return (
    <section className="plugins" id="plugins">
      <h3>Plugins</h3>
      <p className="muted">
        Everything Strata can plug in: the model that makes search by meaning, the models that answer, how tokens are counted,
        where memories are kept, which files become datasets and what your agents may use. Yours run outside Strata: a model
        server you run (Ollama, LM Studio…), a tokenizer file, an MCP server.
      </p>
      {vectors.length > 0 && (
        <p id="plugin-vectors">
          Vectors kept:{" "}
          {vectors.map((v) => `${v.model}: ${v.vectors.toLocaleString()} memories${v.searched ? " (searched now)" : ""}`).join(" · ")}
        </p>
      )}
      <JobBar job={job} unit="memories" />
      {said && (
        <div className="notice" id="plugins-said">
          {said}
        </div>
      )}
      {error && (
        <div className="error" role="alert" id="plugins-error">
          {error}
        </div>
      )}
      <button id="plugins-check-all" onClick={checkAll}>
        Check them all
      </button>
      {KINDS.map(({ kind, heading }) => (
        <div key={kind} className="plugin-kind">
          <h4>{heading}</h4>
          <table className="plugin-table" id={`plugins-${kind}`}>
            <colgroup>
              <col style={{ width: "30%" }} />
              <col style={{ width: "13%" }} />
              <col />
              <col style={{ width: "17rem" }} />
            </colgroup>
            <tbody>
              {all
                ?.filter((p) => p.kind === kind)
                .map((p) => (
                  <Row
                    key={p.name}
                    p={p}
                    busy={job.running}
                    onCheck={() => check(p)}
                    onRemove={() => remove(p)}
                    onUse={() => use(p)}
                  />
                ))}
            </tbody>
          </table>
        </div>
      ))}
      <AddPlugin onAdded={added} />
    </section>
  );
}
