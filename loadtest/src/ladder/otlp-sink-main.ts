import { OtlpSink } from './otlp-sink';

/** An OtlpSink in a process of its own (span-cost.ts): prints its URL, runs until killed. */
void OtlpSink.start().then((sink) => process.stdout.write(`${sink.url}\n`));
