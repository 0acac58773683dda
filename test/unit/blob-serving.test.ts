import { describe, expect, it } from 'vitest';
import { MEDIA_CONTENT_TYPES } from '../../server/features/media/rules.ts';
import { servedAs } from '../../server/platform/blobs/serving.ts';

describe('how a stored object is served', () => {
  it.each([
    ['image/png', 'inline'],
    ['image/jpeg', 'inline'],
    ['audio/mpeg', 'inline'],
    ['video/mp4', 'inline'],
    ['text/plain', 'inline'],
    ['text/html', 'attachment'],
    ['Text/HTML; charset=utf-8', 'attachment'],
    ['image/svg+xml', 'attachment'],
    ['IMAGE/SVG+XML', 'attachment'],
    ['application/javascript', 'attachment'],
    ['application/xml', 'attachment'],
    ['application/pdf', 'attachment'],
    ['text/css', 'attachment'],
    ['application/json', 'attachment'],
    ['application/octet-stream', 'attachment'],
  ])('%s: %s', (type, disposition) => {
    expect(servedAs(type, 'p/abc.x').contentDisposition.split(';')[0]).toBe(disposition);
  });

  it('names a download after the last segment of its key, in safe characters', () => {
    expect(servedAs('text/html', 'media/p1/abc-DEF_1.html')).toEqual({
      contentType: 'text/html',
      contentDisposition: 'attachment; filename="abc-DEF_1.html"',
    });
    expect(servedAs('text/html', 'p/a"b\r\n.html').contentDisposition).toBe(
      'attachment; filename="a_b__.html"',
    );
    expect(servedAs(undefined, 'k').contentType).toBe('application/octet-stream');
  });

  it('shows inline only images, audio, video and plain text among the accepted media types', () => {
    const inline = Object.keys(MEDIA_CONTENT_TYPES).filter(
      (t) => servedAs(t, 'k').contentDisposition === 'inline',
    );
    expect(inline.every((t) => /^(image\/(?!svg)|audio\/|video\/|text\/plain$)/.test(t))).toBe(true);
    expect(inline).not.toContain('image/svg+xml');
  });
});
