import { useState } from "react";
import { commands, type HistoryView } from "./bindings";
import { failed } from "./loaded";
import { count } from "./format";
import { JobBar, useJob } from "./jobs";

// What importing another tool's history did, in words.
export function historyWords(h: HistoryView): string {
  const already = (one: string, many: string) =>
    h.already > 0 ? ` (${count(h.already, one, many)} ${h.already === 1 ? "was" : "were"} already here)` : "";
  if (h.tool === "mem0") return `Imported ${count(h.added, "memory", "memories")} from mem0${already("memory", "memories")}.`;
  const asked = count(h.added, "question with its answer", "questions with their answers");
  return `Imported ${count(h.conversations, "conversation", "conversations")} from ${h.tool}: ${asked}${already("question", "questions")}.`;
}

// After a history comes in, its conversations are read for facts in the background (as the
// settings say, with the chat's model), with progress and Cancel; a stopped reading goes on
// where it stopped when asked.
export function useHistoryFacts() {
  const job = useJob();
  const [note, setNote] = useState<string | null>(null);
  const [unread, setUnread] = useState<string[]>([]);
  const read = async (sessions: string[]) => {
    setNote(null);
    const s = await commands.settings();
    const model = failed(s) ? null : s.data.saved.chat;
    const what = `Reading ${count(sessions.length, "imported conversation", "imported conversations")} for facts`;
    const res = await job.run(what, (id, ch) => commands.readImportedFacts(id, sessions, model, ch));
    if (failed(res, setNote)) return setUnread(sessions);
    setUnread([]);
    const r = res.data;
    if (!r.on) return setNote("Facts are not read from conversations by themselves (Settings → Facts); the conversations are kept.");
    setNote(
      `Read ${count(sessions.length, "conversation", "conversations")}: ${count(r.applied, "fact", "facts")} remembered, ${count(r.proposed, "fact", "facts")} waiting for your review.`,
    );
  };
  return { job, note, unread, read };
}

// The reading's progress, what it found, and a way to go on after a stop.
export function HistoryFacts({ facts }: { facts: ReturnType<typeof useHistoryFacts> }) {
  return (
    <>
      <JobBar job={facts.job} unit="conversations" />
      {facts.note && (
        <div className="notice" id="history-facts">
          {facts.note}
          {facts.unread.length > 0 && !facts.job.running && (
            <button className="link space-before" id="history-facts-again" onClick={() => facts.read(facts.unread)}>
              Go on reading
            </button>
          )}
        </div>
      )}
    </>
  );
}
