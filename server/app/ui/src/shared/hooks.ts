/** The React hooks the pages share: loading, writing, paging, toggling, debounced previews, checkbox picks. */
import { type DependencyList, type FormEvent, useCallback, useEffect, useState } from 'react';
import type { Page } from './api.ts';

/**
 * What a page or section fetched, loaded again when `deps` (what `fetch` reads, as for `useEffect`)
 * change: `data` is undefined until the first answer and kept when a later one fails. `error` is the
 * last failure's message; `act` runs a write, clearing the error first, then reloads, or shows its
 * failure.
 */
export function useLoaded<T>(fetch: () => Promise<T>, deps: DependencyList) {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what fetch reads (checked there, see biome.json)
  const reload = useCallback(() => fetch().then(setData, (e: Error) => setError(e.message)), deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  const act = (write: Promise<unknown>) => {
    setError(undefined);
    return write.then(reload, (e: Error) => setError(e.message));
  };
  return { data, error, setError, reload, act };
}

/**
 * A form's submit: runs the write, `busy` while it runs, and keeps its error message (a thrown
 * Error's, a refused check's too) to show under the form.
 */
export function useWrite(run: () => Promise<void>) {
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      await run();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, onSubmit };
}

/**
 * A keyset-paged list: loads the first page when `fetchPage` changes (wrap it in `useCallback`; leave
 * it undefined while nothing is to load), `more` appends the next one while a cursor is left.
 */
export function usePaged<T>(fetchPage: ((cursor?: string) => Promise<Page<T>>) | undefined) {
  const [rows, setRows] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [loading, setLoading] = useState(false);
  const load = useCallback(
    async (after?: string) => {
      if (!fetchPage) return;
      setLoading(true);
      setError(undefined);
      try {
        const page = await fetchPage(after);
        setRows((prev) => (after ? [...prev, ...page.data] : page.data));
        setCursor(page.meta.cursor);
      } catch (e) {
        setError((e as Error).message);
      } finally {
        setLoading(false);
      }
    },
    [fetchPage],
  );
  useEffect(() => {
    void load();
  }, [load]);
  const more = cursor && !loading ? () => void load(cursor) : undefined;
  return { rows, error, loading, more };
}

/**
 * A detail shown on demand (a row's history or versions): `toggle` fetches and shows it, or hides
 * it when shown; a failed fetch leaves its message in `error`.
 */
export function useToggled<T>(fetch: () => Promise<T>) {
  const [shown, setShown] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const toggle = () =>
    shown ? setShown(undefined) : fetch().then(setShown, (e: Error) => setError(e.message));
  return { shown, error, setError, toggle };
}

/**
 * A live preview: fetched `delayMs` after `fetch` last changed (so typing settles first), a late
 * answer to an older `fetch` dropped; an undefined `fetch` clears it.
 */
export function useDebounced<T>(fetch: (() => Promise<T>) | undefined, delayMs: number) {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    if (!fetch) {
      setData(undefined);
      return;
    }
    let live = true;
    const timer = setTimeout(() => {
      fetch().then(
        (d) => {
          if (!live) return;
          setData(d);
          setError(undefined);
        },
        (e: Error) => live && setError(e.message),
      );
    }, delayMs);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [fetch, delayMs]);
  return { data, error };
}

/** Ids picked with checkboxes: `pick(id, on)` adds or removes one, `clear` empties the set. */
export function usePicked() {
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const pick = (id: string, on: boolean) =>
    setPicked((prev) => {
      const next = new Set(prev);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  return { picked, pick, clear: () => setPicked(new Set()) };
}
