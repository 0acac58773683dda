/** In-app links: a real `href` (open in a new tab works), navigation without a page load. */
import type { ReactNode } from 'react';
import { navigate } from './router.ts';

export function Link({
  href,
  children,
  className,
  title,
}: {
  href: string;
  children: ReactNode;
  className?: string;
  title?: string;
}) {
  return (
    <a
      href={href}
      className={className}
      title={title}
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
