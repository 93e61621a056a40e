import type { ApiError, ErrorCode } from "./bindings";

// A sentence a person can act on, for each error code the engine can return.
const SENTENCES: Record<ErrorCode, string> = {
  invalid_input: "That request does not make sense.",
  not_found: "That memory does not exist (or is not yours to see).",
  forgotten: "That memory was forgotten; its content is gone.",
  duplicate_key: "A memory with that key already exists. Edit it instead.",
  conflict: "Someone changed this memory meanwhile. Reload it and try again.",
  not_strata_database: "This file is not a Strata database.",
  newer_schema: "This database comes from a newer Strata. Update the app to open it.",
  corrupt: "The database is damaged. Restore a backup.",
  busy: "Another program is writing to the database. Try again in a moment.",
  bad_import: "The file could not be imported; nothing was changed.",
  model: "The on-device model is missing or failed.",
  io: "A file could not be read or written.",
  cancelled: "Stopped. What was finished is kept; run it again to go on.",
  provider_key: "The model provider refused the key. Check it in Settings.",
  rate_limited: "The model provider asks to slow down. Try again shortly.",
  context_too_long: "The conversation is too long for this model.",
  model_not_found: "The provider has no such model.",
  network: "The provider could not be reached.",
  provider: "The model provider failed.",
  download: "The download did not finish, and nothing half-done was kept.",
  bad_reply: "The model answered in a form Strata could not read, even when asked twice; nothing was kept.",
  internal: "Something went wrong inside Strata.",
};

export function describe(e: unknown): string {
  if (e && typeof e === "object" && "code" in e && "message" in e) {
    const err = e as ApiError;
    // Input the person can fix: the engine's own sentence says what to change.
    if (err.code === "invalid_input" || err.code === "bad_import") return err.message;
    return `${SENTENCES[err.code] ?? "Something went wrong."} (${err.message})`;
  }
  return String(e);
}
