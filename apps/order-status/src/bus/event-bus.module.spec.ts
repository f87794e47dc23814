import { Test } from '@nestjs/testing';
import { StreamEndReason } from '@app/contracts';
import {
  ORDER_DOMAIN,
  OrderStatus,
  publishStatus,
  type OrderEvent,
  type OrderSnapshot,
} from '@app/order-domain';
import { StreamEventBus } from '@app/event-bus';
import { EventBusModule } from './event-bus.module';
import { InMemoryStreamStore, StreamStore } from '@app/store';
import { OrderSimulator } from '../simulator/simulator';
import { RecordingSink } from '@app/event-bus/testing/bus-fixtures';

describe('EventBusModule', () => {
  it('wires store, bus and simulator, starts the bus on init and stops it on shutdown', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [EventBusModule.forRootAsync({ useFactory: () => ({ queueCapacity: 8 }) })],
    }).compile();
    const app = await moduleRef.init();
    const store = app.get<StreamStore<OrderEvent, OrderSnapshot>>(StreamStore);
    const bus = app.get(StreamEventBus);
    expect(store).toBeInstanceOf(InMemoryStreamStore);
    expect(app.get(OrderSimulator)).toBeInstanceOf(OrderSimulator);
    expect(bus.options.queueCapacity).toBe(8);

    await publishStatus(store, { orderId: 'o', status: OrderStatus.Created });
    const sink = new RecordingSink();
    await bus.open('o', 0, sink);
    expect(sink.seqs).toEqual([1]); // the bus is fed: it started with the module
    await app.close();
    expect(sink.ends).toEqual([StreamEndReason.Shutdown]);
    expect(bus.subscriberCount()).toBe(0);
  });

  it('uses the store the options provide', async () => {
    const store = new InMemoryStreamStore({ domain: ORDER_DOMAIN });
    const moduleRef = await Test.createTestingModule({
      imports: [EventBusModule.forRootAsync({ useFactory: () => ({ store }) })],
    }).compile();
    expect(moduleRef.get(StreamStore)).toBe(store);
    await moduleRef.close();
  });
});
