/** In-app links: a real `href` (open in a new tab works), navigation without a page load. */
import type { ReactNode } from 'react';
import { navigate } from './router.ts';

export function Link({ href, children }: { href: string; children: ReactNode }) {
  return (
    <a
      href={href}
      onClick={(e) => {
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

export const traceHref = (projectId: string, traceId: string) =>
  `/project/${encodeURIComponent(projectId)}/traces/${encodeURIComponent(traceId)}`;
