import { useRef, useState } from "react";
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

// The time a counted step has left, from its pace so far (once it has gone on a second).
function useTimeLeft(p: JobProgress | null): string | null {
  const since = useRef<{ at: number; done: number; total: number; stage: string | null } | null>(null);
  if (!p || p.total <= 0) {
    since.current = null;
    return null;
  }
  const s = since.current;
  if (!s || s.total !== p.total || s.stage !== (p.stage ?? null) || p.done < s.done)
    since.current = { at: performance.now(), done: p.done, total: p.total, stage: p.stage ?? null };
  const start = since.current!;
  const seconds = (performance.now() - start.at) / 1000;
  const did = p.done - start.done;
  if (did <= 0 || seconds < 1) return null;
  const left = ((p.total - p.done) * seconds) / did;
  return left < 90 ? `about ${Math.max(1, Math.round(left))} s left` : `about ${Math.round(left / 60)} min left`;
}

// The running job: what it is and what it does now, a bar of how far it has come with the
// time left, and Cancel.
export function JobBar({ job, unit }: { job: ReturnType<typeof useJob>; unit?: string }) {
  const p = job.progress;
  const left = useTimeLeft(job.running ? p : null);
  if (!job.running) return null;
  const known = p && p.total > 0;
  const of = unit ? ` ${unit}` : "";
  return (
    <div className="job" id="job" role="status">
      <span className="job-label">{job.label}</span>
      {p?.stage && (
        <span className="job-stage" id="job-stage">
          {p.stage}
        </span>
      )}
      {known ? <progress max={p.total} value={p.done} /> : <progress />}
      <span className="job-count" id="job-count">
        {known
          ? `${p.done.toLocaleString()} of ${p.total.toLocaleString()}${of}${left ? ` · ${left}` : ""}`
          : p && p.done > 0
            ? `${p.done.toLocaleString()}${of}…`
            : p?.stage
              ? "…"
              : "starting…"}
      </span>
      <button id="job-cancel" onClick={job.cancel}>
        Cancel
      </button>
    </div>
  );
}
