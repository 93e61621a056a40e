import { useEffect, useState } from "react";
import { commands } from "./bindings";
import { answered } from "./loaded";
import { Adapters } from "./TrainingResults";
import { Candidates } from "./TrainingCandidates";
import { Examples } from "./TrainingExamples";
import { Train } from "./TrainingRun";
import { ScheduleTab } from "./TrainingSchedule";

type Tab = "candidates" | "examples" | "train" | "adapters" | "schedule";

// The Training screen: which memories are worth teaching the on-device model (found by the
// criteria in Settings, decided by a person), training them into an adapter with its progress
// live, the evaluation, and the adapters: use one, roll back, compare.
// The step shown last, kept while the app runs: coming back to Training lands where one left.
let lastTab: Tab = "candidates";

export function Training({ active, dark, onOpenMemory }: { active: boolean; dark: boolean; onOpenMemory: (id: string) => void }) {
  const [tab, setShown] = useState<Tab>(lastTab);
  const setTab = (t: Tab) => {
    lastTab = t;
    setShown(t);
  };
  // A run going on is what one comes back to see.
  useEffect(() => {
    answered(commands.trainingRuns(), (runs) => {
      if (runs[0]?.status === "running" && !runs[0].interrupted) setTab("train");
    });
  }, []);
  return (
    <div className="training" id="training">
      <h2>Training</h2>
      <p className="muted intro">
        Strata can teach the model on this computer the things you rely on most, so it knows them without being reminded.
        You choose what it learns; it is checked before it is used, and you can undo it.
      </p>
      <div className="tabs" role="tablist">
        {(
          [
            ["candidates", "1. Choose what to teach"],
            ["examples", "2. Check the examples"],
            ["train", "3. Teach and check"],
            ["adapters", "4. Use what was learned"],
            ["schedule", "On a schedule"],
          ] as [Tab, string][]
        ).map(([t, label]) => (
          <button key={t} role="tab" id={`tab-${t}`} aria-selected={tab === t} className={tab === t ? "active" : ""} onClick={() => setTab(t)}>
            {label}
          </button>
        ))}
      </div>
      {tab === "candidates" && <Candidates active={active} onOpenMemory={onOpenMemory} onTrain={() => setTab("train")} />}
      {tab === "examples" && <Examples active={active} onOpenMemory={onOpenMemory} />}
      {tab === "train" && <Train active={active} dark={dark} onDone={() => setTab("adapters")} />}
      {tab === "adapters" && <Adapters active={active} dark={dark} />}
      {tab === "schedule" && <ScheduleTab active={active} />}
    </div>
  );
}
