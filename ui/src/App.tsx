import { Suspense, lazy, useEffect, useState } from "react";
import { Agents } from "./Agents";
import { Chat } from "./Chat";
import { Datasets } from "./Datasets";
import { Facts } from "./Facts";
import { Memories } from "./Memories";
import { Settings } from "./Settings";
import { commands, type StoreView } from "./bindings";
import { answered } from "./loaded";

// The analytics screen and its charts load when first opened (ECharts is most of its size).
const Analytics = lazy(() => import("./Analytics").then((m) => ({ default: m.Analytics })));
const Training = lazy(() => import("./Training").then((m) => ({ default: m.Training })));

type Screen = "memories" | "chat" | "files" | "facts" | "agents" | "analytics" | "training" | "settings";

const THEME_KEY = "strata.theme";

// The shell: a navigation rail and one screen.
export function App() {
  const [screen, setScreen] = useState<Screen>("memories");
  // Where the memories shown are kept (this computer's file or a team's database).
  const [store, setStore] = useState<StoreView | null>(null);
  useEffect(() => {
    answered(commands.storeLocation(), setStore);
  }, []);
  // A memory to open in the list (from chat's "memories used").
  const [opening, setOpening] = useState<string | null>(null);
  const openMemory = (id: string) => {
    setOpening(id);
    setScreen("memories");
  };
  // The theme chosen last, else the system's.
  const [dark, setDark] = useState(() => {
    const saved = localStorage.getItem(THEME_KEY);
    return saved ? saved === "dark" : (window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false);
  });
  useEffect(() => {
    document.documentElement.dataset.theme = dark ? "dark" : "light";
  }, [dark]);
  // What the training schedule and the adapters' daily check did meanwhile, until dismissed.
  const [notes, setNotes] = useState<string[]>([]);
  useEffect(() => {
    const look = () => answered(commands.trainingNotes(), (n) => n.length && setNotes((old) => [...old, ...n]));
    look();
    const timer = window.setInterval(look, 15000);
    return () => window.clearInterval(timer);
  }, []);
  const toggleTheme = () => {
    localStorage.setItem(THEME_KEY, dark ? "light" : "dark");
    setDark(!dark);
  };
  return (
    <div className="shell">
      <nav className="rail" aria-label="Screens">
        <div className="brand">Strata</div>
        {/* Its line is there from the start: the rail must not move under a click. */}
        <div className="where" id="where" title={store?.shown}>
          {store ? (store.team ? "Team memory" : "On this computer") : "\u00a0"}
        </div>
        {(["memories", "chat", "files", "facts", "agents", "analytics", "training", "settings"] as Screen[]).map((s) => (
          <button key={s} className={s === screen ? "active" : ""} onClick={() => setScreen(s)} id={`nav-${s}`}>
            {s[0].toUpperCase() + s.slice(1)}
          </button>
        ))}
        <button className="theme" id="theme" onClick={toggleTheme} title="Light or dark theme">
          {dark ? "Light theme" : "Dark theme"}
        </button>
      </nav>
      <main>
        {notes.length > 0 && (
          <div className="notice training-notes" id="training-notes" role="status">
            {notes.map((n, i) => (
              <p key={i}>{n}</p>
            ))}
            <button id="training-notes-seen" onClick={() => setNotes([])}>
              OK
            </button>
          </div>
        )}
        {screen === "memories" && <Memories opening={opening} onOpened={() => setOpening(null)} />}
        {/* The chat stays mounted: its conversation and a streaming answer survive a visit elsewhere. */}
        <div className="screen" hidden={screen !== "chat"}>
          <Chat active={screen === "chat"} onOpenMemory={openMemory} onOpenFacts={() => setScreen("facts")} />
        </div>
        {/* Files stays mounted too: a file being loaded keeps its progress through a visit elsewhere. */}
        <div className="screen" hidden={screen !== "files"}>
          <Datasets active={screen === "files"} />
        </div>
        {screen === "facts" && <Facts active />}
        <div className="screen" hidden={screen !== "agents"}>
          <Agents active={screen === "agents"} />
        </div>
        {screen === "analytics" && (
          <Suspense fallback={<div className="empty">Loading…</div>}>
            <Analytics active dark={dark} onOpenMemory={openMemory} />
          </Suspense>
        )}
        {screen === "training" && (
          <Suspense fallback={<div className="empty">Loading…</div>}>
            <Training active dark={dark} onOpenMemory={openMemory} />
          </Suspense>
        )}
        {screen === "settings" && <Settings store={store} onStoreChanged={setStore} />}
      </main>
    </div>
  );
}
