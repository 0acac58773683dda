import type { InputHTMLAttributes } from 'react';

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
