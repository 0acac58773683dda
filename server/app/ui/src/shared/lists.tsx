/** List pieces the pages share: the grid table, its detail row, show/hide and load-more buttons, a words cell. */
import type { ReactNode } from 'react';

/**
 * A `grid` table under its column headers (a `false` header is a column left out, an empty one an
 * unnamed column, e.g. for row buttons); the caller gives the rows. With `empty` (a list without
 * rows), that sentence stands instead of the table.
 */
export function Grid({
  label,
  className,
  columns,
  empty,
  children,
}: {
  label?: string;
  empty?: string | false;
  className?: string;
  columns: (ReactNode | false)[];
  children: ReactNode;
}) {
  if (empty) return <p className="muted">{empty}</p>;
  return (
    <table className={className ? `grid ${className}` : 'grid'} aria-label={label}>
      <thead>
        <tr>
          {columns.map(
            // Headers are fixed per table: their place is their identity.
            // biome-ignore lint/suspicious/noArrayIndexKey: see above
            (c, i) => c !== false && <th key={i}>{c}</th>,
          )}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/** A row under a table row, across its `columns`: what the row's button opened (history, versions). */
export function DetailRow({ columns, children }: { columns: number; children: ReactNode }) {
  return (
    <tr>
      <td colSpan={columns}>{children}</td>
    </tr>
  );
}

/** The button that opens or closes what a row shows below it: `What`, then `Hide what`. */
export function ShowHide({ what, shown, onClick }: { what: string; shown: boolean; onClick: () => void }) {
  return (
    <button type="button" onClick={onClick}>
      {shown ? `Hide ${what.toLowerCase()}` : what}
    </button>
  );
}

/** A table cell of short words (labels, tags), each in a span of `className`, after `prefix`. */
export function WordsCell({
  words,
  className,
  prefix = '',
}: {
  words: readonly string[];
  className: string;
  prefix?: string;
}) {
  return (
    <td>
      {words.map((w) => (
        <span key={w} className={className}>
          {prefix}
          {w}
        </span>
      ))}
    </td>
  );
}

/** The "Load more" button of a keyset-paged list, shown while a next page is left to load. */
export function LoadMore({ more }: { more: (() => void) | undefined }) {
  return (
    more && (
      <button type="button" onClick={more}>
        Load more
      </button>
    )
  );
}
