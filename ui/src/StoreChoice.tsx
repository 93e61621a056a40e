import { useState } from "react";
import { commands, type StoreView } from "./bindings";
import { failed } from "./loaded";

// Where the memories the window shows are kept: this computer's file, or a team's database
// (PostgreSQL with pgvector). The address is saved without its password, which goes to the
// OS keychain. `view` is the shell's (what the rail says), `onChanged` tells it of a switch.
export function StoreChoice({ view, onChanged }: { view: StoreView | null; onChanged: (v: StoreView) => void }) {
  const [url, setUrl] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const switched = (v: StoreView, said: string) => {
    onChanged(v);
    setNotice(said);
  };
  const useTeam = async () => {
    setBusy(true);
    setError(null);
    setNotice(null);
    const res = await commands.useTeamDatabase(url, password);
    setBusy(false);
    if (failed(res, setError)) return;
    setPassword("");
    switched(res.data, "The window now shows your team's memories. The password is kept in your OS keychain.");
  };
  const useFile = async () => {
    setBusy(true);
    setError(null);
    setNotice(null);
    const res = await commands.useThisComputer();
    setBusy(false);
    if (failed(res, setError)) return;
    switched(res.data, "The window now shows the memories kept on this computer.");
  };

  // Drawn whole at once, its line filled in when known: nothing below moves under a click.
  return (
    <section className="store-choice">
      <h3>Where your memories are kept</h3>
      <p id="store-now">
        {view ? (view.team ? "On your team's database: " : "On this computer: ") : "\u00a0"}
        {view && <span className="path">{view.shown}</span>}
      </p>
      {view?.problem && (
        <div className="error" role="alert" id="store-problem">
          {view.problem}
        </div>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          useTeam();
        }}
      >
        <label className="field">
          Team database{" "}
          <input
            name="team-url"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            placeholder="postgres://you@db.example.com:5432/strata"
            autoComplete="off"
            spellCheck={false}
          />
        </label>
        <label className="field">
          Password{" "}
          <input type="password" name="team-password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="off" />
        </label>
        <button type="submit" id="team-connect" disabled={busy || !url.trim()}>
          {busy ? "Connecting…" : "Use this team database"}
        </button>{" "}
        {view?.team && (
          <button type="button" id="use-this-computer" disabled={busy} onClick={useFile}>
            Use this computer's file again
          </button>
        )}
      </form>
      <p className="muted">
        A team shares one memory on a PostgreSQL server with pgvector: what you keep private stays yours, what you share everyone sees.
        Training an adapter works with this computer's file only.
      </p>
      {notice && (
        <div className="notice" id="store-notice">
          {notice}
        </div>
      )}
      {error && (
        <div className="error" role="alert" id="store-error">
          {error}
        </div>
      )}
    </section>
  );
}
