import { type FormEvent, useCallback, useEffect, useState } from 'react';

/**
 * What a page or section fetched, loaded when `fetch` changes (wrap it in `useCallback` with what it
 * reads): `data` is undefined until the first answer and kept when a later one fails. `error` is the
 * last failure's message; `act` runs a write, clearing the error first, then reloads, or shows its
 * failure.
 */
export function useLoaded<T>(fetch: () => Promise<T>) {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const reload = useCallback(() => fetch().then(setData, (e: Error) => setError(e.message)), [fetch]);
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
