// e2e tests start real servers and clients; individual waits carry their own bounds.
jest.setTimeout(30_000);
