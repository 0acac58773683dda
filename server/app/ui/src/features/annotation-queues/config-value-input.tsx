/** Shared by the queue review and the trace's annotation form (features/traces/annotate.tsx). */
import type { ScoreConfig } from './api.ts';

/** A score config's value: a number within its bounds, or one of its categories by label. */
export function ConfigValueInput({
  config,
  value,
  onChange,
  label,
  required,
}: {
  config: ScoreConfig;
  value: string;
  onChange: (value: string) => void;
  label: string;
  required?: boolean;
}) {
  return config.dataType === 'NUMERIC' ? (
    <input
      aria-label={label}
      type="number"
      step="any"
      min={config.minValue ?? undefined}
      max={config.maxValue ?? undefined}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      required={required}
    />
  ) : (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.target.value)} required={required}>
      <option value="">choose</option>
      {(config.categories ?? []).map((c) => (
        <option key={c.label} value={c.label}>
          {c.label}
        </option>
      ))}
    </select>
  );
}
