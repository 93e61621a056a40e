import { useEffect, useState } from "react";
import { commands, type ScheduleSettings, type ScheduleView_Serialize as ScheduleView, type SettingsView_Serialize as SettingsView } from "./bindings";
import { answered, failed } from "./loaded";
import { pct, when } from "./format";

// The Training screen's Schedule tab: the schedule in a sentence, the adapter it trained that
// waits for your yes (with how it did), and everything it did.
export function ScheduleTab({ active }: { active: boolean }) {
  const [view, setView] = useState<ScheduleView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  useEffect(() => {
    if (active) answered(commands.trainingSchedule(), setView, setError);
  }, [active]);
  const answer = async (id: string, yes: boolean) => {
    setError(null);
    const r = await commands.answerSchedule(id, yes);
    if (failed(r, setError)) return;
    setView(r.data);
    setSaid(yes ? `${id} is in use: the chat's model answers with it from now on.` : `${id} stays out of use.`);
  };
  if (!view) return <section className="panel">{error ?? "Loading…"}</section>;
  const w = view.awaiting;
  return (
    <section className="panel" id="schedule">
      <p id="schedule-said">{view.said}</p>
      <p className="muted">Change it in Settings → Training on a schedule.</p>
      {said && (
        <p className="notice" id="schedule-answered" role="status">
          {said}
        </p>
      )}
      {error && <div className="error">{error}</div>}
      {w && (
        <div className="notice" id="schedule-awaiting" role="alertdialog">
          <p id="schedule-awaiting-said">
            The schedule taught your new facts to {w.id}. {w.report ? w.report.verdict : ""}
            {w.report ? ` Looking the facts up instead answered ${pct(w.report.recall_with_retrieval)}.` : ""} Use it?
          </p>
          <button id="schedule-yes" onClick={() => answer(w.id, true)}>
            Yes, use it
          </button>{" "}
          <button id="schedule-no" onClick={() => answer(w.id, false)}>
            Not now
          </button>
        </div>
      )}
      <h3>What it did</h3>
      {view.history.length === 0 ? (
        <p className="muted" id="schedule-empty">
          Nothing yet.
        </p>
      ) : (
        <ol className="timeline" id="schedule-history">
          {view.history.map((e, i) => (
            <li key={i}>
              {when(e.at)}: {e.said}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

// Settings → Training on a schedule: off (the default), nightly at a time, or when the app is
// idle; how many new approved facts it waits for; whether a better adapter is used at once.
export function ScheduleSettingsForm({ view, onSaved }: { view: SettingsView; onSaved: (v: SettingsView) => void }) {
  const s = view.saved.training.schedule;
  const [at, setAt] = useState(s.at);
  const [idle, setIdle] = useState(String(s.idle_minutes));
  const [facts, setFacts] = useState(String(s.min_new_facts));
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const save = async (next: Partial<ScheduleSettings>) => {
    setError(null);
    const r = await commands.saveSettings({ ...view.saved, training: { ...view.saved.training, schedule: { ...s, ...next } } });
    if (failed(r, setError)) return;
    onSaved(r.data);
    setSaved("Saved.");
  };
  return (
    <section className="schedule-settings" id="schedule-settings">
      <h3>Training on a schedule</h3>
      <p className="muted">
        Strata can teach the facts you approved by itself, and check the result before it is used. Off until you turn it on.
      </p>
      <label className="field">
        <span>When</span>
        <select id="schedule-when" value={s.when} onChange={(e) => save({ when: e.target.value as ScheduleSettings["when"] })}>
          <option value="off">Off</option>
          <option value="nightly">Each night</option>
          <option value="idle">When the app is idle</option>
        </select>
      </label>
      {s.when === "nightly" && (
        <label className="field">
          <span>At</span>
          <input id="schedule-at" type="time" value={at} onChange={(e) => setAt(e.target.value)} onBlur={() => at !== s.at && save({ at })} />
        </label>
      )}
      {s.when === "idle" && (
        <label className="field">
          <span>After this many minutes unused</span>
          <input id="schedule-idle" type="number" min={1} value={idle} onChange={(e) => setIdle(e.target.value)} onBlur={() => save({ idle_minutes: Math.round(Number(idle)) })} />
        </label>
      )}
      <label className="field">
        <span>Teach when at least this many approved facts are new</span>
        <input id="schedule-facts" type="number" min={1} value={facts} onChange={(e) => setFacts(e.target.value)} onBlur={() => save({ min_new_facts: Math.round(Number(facts)) })} />
      </label>
      <label className="field">
        <span>When it does better than what is in use</span>
        <select id="schedule-promote" value={s.promotion} onChange={(e) => save({ promotion: e.target.value as ScheduleSettings["promotion"] })}>
          <option value="ask">Ask me first</option>
          <option value="automatic">Use it at once</option>
        </select>
      </label>
      <p id="schedule-settings-said">{view.schedule_said}</p>
      {saved && !error && (
        <p className="notice" role="status">
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
