import { useEffect, useState } from "react";
import { commands, type OnDeviceModelView } from "./bindings";
import { answered, failed } from "./loaded";
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
    await answered(commands.licence(spdx), setLicence, setError);
  };

  useEffect(() => remember(models), [models]);

  const done = (res: Awaited<ReturnType<typeof commands.chooseModel>>, said: string) => {
    setNotice(null);
    setError(null);
    if (failed(res, setError)) return;
    setModels(res.data);
    setNotice(said);
  };

  const download = async (m: OnDeviceModelView) => {
    setError(null);
    setNotice(null);
    const res = await job.run(`Downloading ${m.title}`, (id, ch) => commands.fetchModel(id, m.name, ch));
    done(res, `${m.title} is downloaded and checked: it is the publisher's file, byte for byte.`);
    if (failed(res)) answered(commands.onDeviceModels(), setModels);
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
            <ModelRow
              key={m.name}
              m={m}
              busy={job.running}
              onLicence={() => showLicence(m.licence)}
              onDownload={() => download(m)}
              onUse={(extraction) => use(m, extraction)}
            />
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

type RowProps = { m: OnDeviceModelView; busy: boolean; onLicence: () => void; onDownload: () => void; onUse: (extraction: boolean) => void };

// One model: who made it and its licence, its size, whether it is here, what it is used for,
// and a download or a choice.
function ModelRow({ m, busy, onLicence, onDownload, onUse }: RowProps) {
  return (
    <tr id={`model-${m.name}`}>
      <td>
        <strong>{m.title}</strong>
        <div className="muted">
          {m.attribution} ·{" "}
          <button className="link" onClick={onLicence}>
            {m.licence} licence
          </button>
        </div>
      </td>
      <td>{size(m.bytes)}</td>
      <td className="model-state">{STATE[m.state] ?? m.state}</td>
      <td className="model-use">{[m.answers && "Answers", m.extracts && "Facts"].filter(Boolean).join(", ") || "—"}</td>
      <td className="model-actions">
        {m.state !== "ready" ? (
          <button onClick={onDownload} disabled={busy}>
            {m.state === "fetching" ? "Resume download" : "Download"}
          </button>
        ) : (
          <>
            <button onClick={() => onUse(false)} disabled={m.answers || busy}>
              Use for answers
            </button>
            <button onClick={() => onUse(true)} disabled={m.extracts || busy}>
              Use for facts
            </button>
          </>
        )}
      </td>
    </tr>
  );
}
