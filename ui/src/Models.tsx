import { useEffect, useState } from "react";
import { commands, type OnDeviceModelView } from "./bindings";
import { answered } from "./loaded";
import { describe } from "./errors";
import { JobBar, useJob } from "./jobs";

// How a model's name reads in an answer ("qwen2.5-coder-0.5b-instruct-q4_k_m" → its title),
// learnt whenever the list is read.
const titles: Record<string, string> = {};
export const remember = (models: OnDeviceModelView[]) => models.forEach((m) => (titles[m.file] = m.title));
export const titleOf = (file: string) => titles[file] ?? file;

const STATE: Record<string, string> = {
  ready: "On this computer",
  missing: "Not downloaded",
  fetching: "Download stopped part of the way — resume it",
  damaged: "Damaged — download it again",
};

const size = (bytes: number) => (bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${Math.round(bytes / 1e6)} MB`);

// Settings → On-device models: each model Strata can run with no key, whether it is here,
// who made it and under which licence; download one (progress and Cancel), and choose which
// answers and which reads conversations for facts. A model not fully downloaded is not offered.
export function OnDeviceModels({ initial }: { initial: OnDeviceModelView[] }) {
  const [models, setModels] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [licence, setLicence] = useState<{ text: string; embedder: string } | null>(null);
  const job = useJob();

  const showLicence = async (spdx: string) => {
    if (licence) return setLicence(null);
    const res = await commands.licence(spdx);
    if (res.status === "ok") setLicence(res.data);
    else setError(describe(res.error));
  };

  useEffect(() => remember(models), [models]);

  const done = (res: Awaited<ReturnType<typeof commands.chooseModel>>, said: string) => {
    if (res.status === "ok") {
      setModels(res.data);
      setError(null);
      setNotice(said);
    } else {
      setNotice(null);
      setError(describe(res.error));
    }
  };

  const download = async (m: OnDeviceModelView) => {
    setError(null);
    setNotice(null);
    const res = await job.run(`Downloading ${m.title}`, (id, ch) => commands.fetchModel(id, m.name, ch));
    done(res, `${m.title} is downloaded and checked: it is the publisher's file, byte for byte.`);
    if (res.status !== "ok") answered(commands.onDeviceModels(), setModels);
  };

  const use = async (m: OnDeviceModelView, extraction: boolean) => {
    const res = await commands.chooseModel(m.name, extraction);
    done(res, extraction ? `${m.title} now reads your conversations for facts.` : `${m.title} now answers in Chat.`);
  };

  return (
    <section id="on-device-models">
      <h3>On-device models</h3>
      <p className="muted">
        These models run on this computer: no key, and nothing you ask leaves it. Each file is checked against its publisher's release before
        it is used. A larger model answers better and more slowly.
      </p>
      <table className="models">
        <thead>
          <tr>
            <th>Model</th>
            <th>Size</th>
            <th>Status</th>
            <th>Used for</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {models.map((m) => (
            <tr key={m.name} id={`model-${m.name}`}>
              <td>
                <strong>{m.title}</strong>
                <div className="muted">
                  {m.attribution} ·{" "}
                  <button className="link" onClick={() => showLicence(m.licence)}>
                    {m.licence} licence
                  </button>
                </div>
              </td>
              <td>{size(m.bytes)}</td>
              <td className="model-state">{STATE[m.state] ?? m.state}</td>
              <td className="model-use">{[m.answers && "Answers", m.extracts && "Facts"].filter(Boolean).join(", ") || "—"}</td>
              <td className="model-actions">
                {m.state !== "ready" ? (
                  <button onClick={() => download(m)} disabled={job.running}>
                    {m.state === "fetching" ? "Resume download" : "Download"}
                  </button>
                ) : (
                  <>
                    <button onClick={() => use(m, false)} disabled={m.answers || job.running}>
                      Use for answers
                    </button>
                    <button onClick={() => use(m, true)} disabled={m.extracts || job.running}>
                      Use for facts
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {licence && (
        <div className="licence" id="licence">
          <p className="muted">{licence.embedder}</p>
          <pre>{licence.text}</pre>
        </div>
      )}
      <JobBar job={job} unit="MB" />
      {notice && (
        <div className="notice" id="models-notice">
          {notice}
        </div>
      )}
      {error && (
        <div className="error" role="alert" id="models-error">
          {error}
        </div>
      )}
    </section>
  );
}
