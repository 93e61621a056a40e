import { useEffect, useState } from "react";
import type { ApiError } from "./bindings";
import { describe } from "./errors";

export type Answer<T> = { status: "ok"; data: T } | { status: "error"; error: ApiError };

// Whether a command failed, its failure said in words to `say` (none: nothing to say); after
// it, the answer is known to hold data.
export function failed<T>(r: Answer<T>, say?: (words: string) => void): r is { status: "error"; error: ApiError } {
  if (r.status === "ok") return false;
  say?.(describe(r.error));
  return true;
}

// What a command answered: its data to `ok`, or a failure in words to `failed` (none: a failure
// changes nothing on screen, for what only adds to it). Whether it succeeded.
export async function answered<T>(ask: Promise<Answer<T>>, ok: (data: T) => void, failed?: (words: string) => void): Promise<boolean> {
  const r = await ask;
  if (r.status === "ok") ok(r.data);
  else failed?.(describe(r.error));
  return r.status === "ok";
}

// What a screen or tab shows from one command: asked when it opens (and again when `deps`
// change while it is open, or on `reload`); a failure is said in words in `error`, which the
// screen's own actions also use.
export function useLoaded<T>(active: boolean, ask: () => Promise<Answer<T>>, deps: unknown[] = []) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = () =>
    ask().then((r) => {
      if (r.status === "ok") setData(r.data);
      else setError(describe(r.error));
    });
  useEffect(() => {
    if (active) reload();
  }, [active, ...deps]);
  return { data, error, setError, reload };
}
