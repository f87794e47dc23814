/**
 * Figures from the articles the report sets beside ours, each with its source and the
 * setup it came from (our sentences, their numbers). The code calls them seed 000-003:
 * - 000: "gRPC Server-Streaming vs REST Long-Polling Under Load: p50, p99, Connections and
 *   CPU on .NET 8";
 * - 001: "WebSocket vs SSE vs Long Polling: The Real Cost of 1,000 Events";
 * - 002: "RSocket vs gRPC vs WebSocket on Spring Boot 4.1: When Each One Wins" (September 2026);
 * - 003: sebidenes/GrpcPerformance on GitHub (ASP.NET Core gRPC, May 2021).
 */
export interface ArticleFigure {
  readonly scenario: string;
  readonly source: string;
  readonly setup: string;
  readonly figures: readonly (readonly [string, string])[];
}

export const ARTICLE_FIGURES: readonly ArticleFigure[] = [
  {
    scenario: 'steady',
    source: 'seed 000, "gRPC Server-Streaming vs REST Long-Polling Under Load" (.NET 8)',
    setup:
      '.NET 8 / Kestrel on a 4-vCPU VM, generator on a second VM, 5,000 clients x 10 events/s, 60 s runs, median of five. Ours: Node + Nest on one shared 2-core host, service and generator pinned to one core each.',
    figures: [
      ['p50 gap, gRPC streaming vs HTTP/2 long-poll', '6 ms'],
      ['p99 gap, gRPC streaming vs HTTP/2 long-poll', '47 ms'],
      ['short-poll (250 ms) p50', '131 ms, at 96 % CPU'],
      ['short-poll bytes per event vs streaming', '27x'],
      ['long-poll p99, clients moved from HTTP/1.1 to HTTP/2', '148 ms -> 61 ms'],
    ],
  },
  {
    scenario: 'idle',
    source: 'seed 000 (idle table) and seed 001 (memory per idle connection)',
    setup:
      'seed 000: 5,000 idle subscribers for ten minutes, .NET managed heap. seed 001: 500 idle clients on a Node server (Apple M5), RSS after two forced GCs. Ours: RSS after two forced GCs (inspector), before and after connecting.',
    figures: [
      [
        'seed 000 server CPU idle: gRPC / LP h2 / LP h1.1 / short-poll',
        '0.4 % / 1.1 % / 1.3 % / 61 %',
      ],
      ['seed 000 requests/s idle: gRPC / LP h2 / LP h1.1 / short-poll', '0 / 167 / 167 / 20,000'],
      ['seed 000 heap, 5,000 subscribers: gRPC / LP h2 / LP h1.1', '212 MB / 188 MB / 241 MB'],
      ['seed 001 RSS per idle connection: WebSocket / SSE / long-poll', '13 KB / 23 KB / 21 KB'],
    ],
  },
  {
    scenario: 'bytes',
    source: 'seed 001, "WebSocket vs SSE vs Long Polling: The Real Cost of 1,000 Events"',
    setup:
      'Node server with ws, SSE and a parked /poll endpoint, byte-counting TCP proxy, no TLS counted. Ours: the Nest service; socket.io (engine.io framing adds a few bytes over raw ws), and the raw WebSocket route (`websocket`), whose `{"type","data"}` envelope adds 25 B of JSON per event to the 2-4 B of RFC 6455 framing; the -h2 rows run over TLS, so TLS record overhead is in them.',
    figures: [
      ['WebSocket total', '119,692 B (~2.1 B/event framing)'],
      ['SSE total (HTTP/1.1)', '131,596 B (~14.2 B/event without id:)'],
      ['SSE over HTTP/2', '134,534 B'],
      [
        'long-poll, browser headers (HTTP/1.1)',
        '884,698 B (570 B request + 198 B response headers per event)',
      ],
      ['long-poll, bare headers (HTTP/1.1)', '406,710 B'],
      ['long-poll over HTTP/2', '182,475 B'],
    ],
  },
  {
    scenario: 'wan',
    source: 'seed 001',
    setup:
      'proxy adds 25 ms each way; one event per 100 ms. Ours: 10 and 50 events/s per subscriber.',
    figures: [['mean delivery, all three transports at 10 ev/s', '~26.5 ms (spread under 0.3 ms)']],
  },
  {
    scenario: 'slow-consumer',
    source: 'seed 000',
    setup:
      'one client throttled to 50 KB/s among 5,000; bounded per-subscriber channel with DropOldest. Ours: the service bounded queue (BUS_OVERFLOW_POLICY, default conflate).',
    figures: [
      ['healthy p99 with bounded drop-oldest queue', '14 ms'],
      ['healthy p99 without a bound', '1.9 s'],
    ],
  },
  {
    scenario: 'backpressure',
    source: 'seed 002, "RSocket vs gRPC vs WebSocket on Spring Boot 4.1" (September 2026)',
    setup:
      'an unbounded server stream; the client takes 100 then stops reading. Ours: a paced simulator (not an unbounded loop) and a bounded per-subscriber queue.',
    figures: [
      ['gRPC, produced after quiet 0.5 / 1 / 2 s', '103,425 / 449,318 / 1,208,219'],
      ['raw WebSocket, produced after quiet 0.5 / 1 / 2 s', '19,664 / 143,870 / 320,255'],
      ['RSocket (request(n))', '100 at every quiet period'],
    ],
  },
  {
    scenario: 'reconnect',
    source: 'seed 000',
    setup:
      'streams ended after five minutes with UNAVAILABLE, clients reconnect. Ours: a 2 s max stream age plus forced client drops.',
    figures: [['reconnect cost p99', '11 ms']],
  },
  {
    scenario: 'unary',
    source:
      'seed 003, sebidenes/GrpcPerformance (ASP.NET Core gRPC, GrpcGreeter on .NET Core 3.1, run 1, May 2021)',
    setup: '500 calls per case, concurrency 50; times are totals for all 500 calls.',
    figures: [
      ['Grpc.AspNetCore: sequential new channel / reused', '3,177 ms / 1,095 ms'],
      ['Grpc.AspNetCore: concurrent new channel / reused', '8,987 ms / 3,868 ms'],
      ['Grpc.Core: sequential new channel / reused', '5,066 ms / 288 ms'],
      ['Grpc.Core: concurrent new channel / reused', '297 ms / 83 ms'],
    ],
  },
];
