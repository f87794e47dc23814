import { RedisStreamStore } from '@app/redis-store';
import { InMemoryStreamStore } from '@app/store';
import type { StreamStore } from '@app/store';
import { storeBackend } from './metrics.service';

/** A store of the class without running its constructor (the Redis one would connect). */
function instanceOf(cls: abstract new (...args: never[]) => StreamStore): StreamStore {
  return Object.create(cls.prototype) as StreamStore;
}

// The backend label comes from the class name, so renaming a store class must not change it.
describe('storeBackend (order_store_up{backend})', () => {
  it('labels the in-process store memory', () => {
    expect(storeBackend(instanceOf(InMemoryStreamStore))).toBe('memory');
  });

  it('labels the Redis store redis', () => {
    expect(storeBackend(instanceOf(RedisStreamStore))).toBe('redis');
  });
});
