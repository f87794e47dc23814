import { connect } from 'node:net';
import { ephemeralPortFloor, stablePort } from './stable-port';

function connectError(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code));
  });
}

describe('stablePort', () => {
  it('is refused until something listens there', async () => {
    expect(await connectError(await stablePort())).toBe('ECONNREFUSED');
  });

  it('lies outside the ports the system hands to listen(0) and to clients', async () => {
    // A port from the ephemeral range can be given to another test's server between the
    // pick and its use (CI runs two Jest processes at once).
    const floor = ephemeralPortFloor();
    for (let i = 0; i < 20; i++) expect(await stablePort()).toBeLessThan(floor);
  });
});
