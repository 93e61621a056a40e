import { useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import { commands, type JobProgress } from "./bindings";

let counter = 0;

// A long job (import, export, re-embedding, maintenance): runs one at a time per hook, with
// its progress as the engine reports it and a way to stop it.
export function useJob() {
  const [job, setJob] = useState<string | null>(null);
  const [label, setLabel] = useState("");
  const [progress, setProgress] = useState<JobProgress | null>(null);

  async function run<T>(what: string, f: (job: string, onProgress: Channel<JobProgress>) => Promise<T>): Promise<T> {
    const id = `job-${Date.now()}-${counter++}`;
    const channel = new Channel<JobProgress>();
    channel.onmessage = (p) => setProgress(p);
    setJob(id);
    setLabel(what);
    setProgress(null);
    try {
      return await f(id, channel);
    } finally {
      setJob(null);
      setProgress(null);
    }
  }

  const cancel = () => {
    if (job) commands.cancelJob(job);
  };
  return { run, cancel, running: job !== null, label, progress };
}

// The running job: what it is, a bar of how far it has come, and Cancel.
export function JobBar({ job, unit }: { job: ReturnType<typeof useJob>; unit?: string }) {
  if (!job.running) return null;
  const p = job.progress;
  const known = p && p.total > 0;
  const of = unit ? ` ${unit}` : "";
  return (
    <div className="job" id="job" role="status">
      <span className="job-label">{job.label}</span>
      {known ? <progress max={p.total} value={p.done} /> : <progress />}
      <span className="job-count" id="job-count">
        {known ? `${p.done.toLocaleString()} of ${p.total.toLocaleString()}${of}` : p ? `${p.done.toLocaleString()}${of}…` : "starting…"}
      </span>
      <button id="job-cancel" onClick={job.cancel}>
        Cancel
      </button>
    </div>
  );
}
