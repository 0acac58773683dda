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

/** A form's fields held as one object; `set(k)` is the change handler of the text field `k`. */
export function useForm<F extends object>(initial: F) {
  const [form, setForm] = useState(initial);
  const set = (k: keyof F) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [k]: e.target.value }));
  return { form, setForm, set };
}

/** An optional text input after its label (`set(k)` of `useForm` as its change handler). */
export function Input({ label, ...input }: { label: string } & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <label>
      {label} <input {...input} />
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
