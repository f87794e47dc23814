import { multipartBodies } from './multipart';

/** What Nchan 1.3 answered a long-poll with three retained messages (curl, byte for byte). */
const B = '0WpxZRD8zmR/CqxmfNZP.ktw7SYytkRv';
const NCHAN_ANSWER =
  `--${B}\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n{"seq":1}\r\n` +
  `--${B}\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n{"seq":2}\r\n` +
  `--${B}\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n{"seq":3}\r\n` +
  `--${B}--\r\n`;

describe('multipartBodies', () => {
  it("reads every message of Nchan's multipart long-poll answer, in order", () => {
    expect(multipartBodies(`multipart/mixed; boundary=${B}`, NCHAN_ANSWER)).toEqual([
      '{"seq":1}',
      '{"seq":2}',
      '{"seq":3}',
    ]);
  });

  it('reads parts without headers (messages published without a Content-Type) and one part alone', () => {
    const body = `--${B}\r\n\r\n{"seq":7}\r\n--${B}--\r\n`;
    expect(multipartBodies(`multipart/mixed; boundary="${B}"`, body)).toEqual(['{"seq":7}']);
  });

  it('keeps a CRLF inside a message', () => {
    const body = `--${B}\r\n\r\nline 1\r\nline 2\r\n--${B}--`;
    expect(multipartBodies(`multipart/mixed; boundary=${B}`, body)).toEqual(['line 1\r\nline 2']);
  });

  it('is undefined for a single-message answer, and throws on a truncated multipart body', () => {
    expect(multipartBodies('application/json', '{"seq":1}')).toBeUndefined();
    expect(multipartBodies(undefined, '{"seq":1}')).toBeUndefined();
    expect(() => multipartBodies(`multipart/mixed; boundary=${B}`, `--${B}\r\n\r\n{"se`)).toThrow(
      /close delimiter/,
    );
    expect(() => multipartBodies(`multipart/mixed; boundary=${B}`, '{"seq":1}')).toThrow(
      /first delimiter/,
    );
  });
});
