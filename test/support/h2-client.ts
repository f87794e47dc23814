import { connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { withAuth } from './auth';
import { once } from './wait-for';

/** An HTTP/2 session to the service's TLS port, trusting its development certificate. */
export async function h2Connect(httpsUrl: string, ca: string): Promise<ClientHttp2Session> {
  const session = connect(httpsUrl, { ca, servername: 'localhost' });
  await once(session, 'connect');
  return session;
}

export interface H2Response {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One complete GET over an existing session (with the default token unless told otherwise). */
export function h2Get(
  session: ClientHttp2Session,
  path: string,
  headers: Record<string, string> = {},
): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':method': 'GET', ':path': path, ...withAuth(headers) });
    let status = 0;
    let resHeaders: IncomingHttpHeaders = {};
    let body = '';
    req.setEncoding('utf8');
    req.on('response', (h) => {
      status = Number(h[':status']);
      resHeaders = h;
    });
    req.on('data', (c: string) => (body += c));
    req.on('end', () => resolve({ status, headers: resHeaders, body }));
    req.on('error', reject);
    req.end();
  });
}
