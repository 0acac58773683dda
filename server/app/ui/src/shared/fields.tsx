/** Form pieces the pages share: labelled inputs, checkboxes and choices, a form's state, the error alert. */
import { type ChangeEvent, type InputHTMLAttributes, useState } from 'react';

/** A required input under its label; the caller holds its value. */
export function Field({
  label,
  value,
  onValue,
  ...input
}: { label: string; value: string; onValue: (value: string) => void } & Omit<
  InputHTMLAttributes<HTMLInputElement>,
  'value' | 'onChange'
>) {
  return (
    <label>
      {label}
      <input value={value} onChange={(e) => onValue(e.target.value)} required {...input} />
    </label>
  );
}

/** The keys of `F` that hold text. */
type TextKey<F> = { [K in keyof F]: F[K] extends string ? K : never }[keyof F];

/** The keys of `F` that hold a flag. */
type FlagKey<F> = { [K in keyof F]: F[K] extends boolean ? K : never }[keyof F];

/**
 * A form's fields held as one object; `bind(k)` is the value and change handler of the text field
 * `k`, `check(k)` those of the flag `k` (a checkbox's).
 */
export function useForm<F extends object>(initial: F) {
  const [form, setForm] = useState(initial);
  const set = (k: keyof F) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [k]: e.target.value }));
  const bind = (k: TextKey<F>) => ({ value: form[k] as string, onChange: set(k) });
  const check = (k: FlagKey<F>) => ({
    checked: form[k] as boolean,
    onChange: (e: { target: { checked: boolean } }) => setForm((f) => ({ ...f, [k]: e.target.checked })),
  });
  return { form, setForm, bind, check };
}

/** An optional text input after its label (`bind(k)` of `useForm` spread on it). */
export function Input({ label, ...input }: { label: string } & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <label>
      {label} <input {...input} />
    </label>
  );
}

/** A checkbox before its label (`check(k)` of `useForm` spread on it). */
export function Check({ label, ...input }: { label: string } & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <label>
      <input type="checkbox" {...input} /> {label}
    </label>
  );
}

/** A select after its label, one option per value, shown as `labelOf` says (the value itself by default). */
export function Choice<T extends string>({
  label,
  value,
  onChange,
  options,
  labelOf = (o) => o,
}: {
  label: string;
  value: string;
  onChange: (e: ChangeEvent<HTMLSelectElement>) => void;
  options: readonly T[];
  labelOf?: (option: T) => string;
}) {
  return (
    <label>
      {label}{' '}
      <select value={value} onChange={onChange}>
        {options.map((o) => (
          <option key={o} value={o}>
            {labelOf(o)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A failure read out as it appears (a form's or a section's last error), nothing without one. */
export function ErrorAlert({ error }: { error: string | undefined }) {
  return (
    error && (
      <p className="error" role="alert">
        {error}
      </p>
    )
  );
}
