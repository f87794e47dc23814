import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Parser, type Diagnostic } from '@asyncapi/parser';
import Ajv, { type ValidateFunction } from 'ajv';

export const ASYNCAPI_FILE = join(__dirname, '..', '..', 'docs', 'asyncapi.yaml');

export interface Message {
  readonly name: string;
  readonly payload: object;
}

export interface Schema {
  readonly properties?: Record<string, object>;
  readonly required?: string[];
  readonly enum?: string[];
  readonly oneOf?: Schema[];
}

export interface AsyncApiJson {
  readonly channels: Record<string, { address: string; messages: Record<string, Message> }>;
  readonly operations: Record<
    string,
    { channel: { address: string }; security?: { type: string; name?: string; in?: string }[] }
  >;
  readonly components: { schemas: Record<string, Schema> };
}

/** docs/asyncapi.yaml parsed by @asyncapi/parser, with lookups and payload validation. */
export class AsyncApiDocument {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly validators = new Map<object, ValidateFunction>();

  private constructor(
    /** Resolved: every $ref replaced by what it points at. */
    readonly json: AsyncApiJson,
    readonly diagnostics: Diagnostic[],
  ) {}

  static async load(): Promise<AsyncApiDocument> {
    const parsed = await new Parser().parse(readFileSync(ASYNCAPI_FILE, 'utf8'));
    if (parsed.document === undefined) {
      throw new Error(`asyncapi.yaml did not parse: ${JSON.stringify(parsed.diagnostics)}`);
    }
    return new AsyncApiDocument(parsed.document.json<AsyncApiJson>(), parsed.diagnostics);
  }

  channel(address: string): { address: string; messages: Record<string, Message> } {
    const found = Object.values(this.json.channels).find((c) => c.address === address);
    if (found === undefined) throw new Error(`no channel ${address}`);
    return found;
  }

  message(address: string, name: string): Message {
    const found = Object.values(this.channel(address).messages).find((m) => m.name === name);
    if (found === undefined) throw new Error(`channel ${address} has no message ${name}`);
    return found;
  }

  /** The validation errors of `payload` against message `name` of the channel (none: []). */
  errors(address: string, name: string, payload: unknown): unknown[] {
    const schema = this.message(address, name).payload;
    let validate = this.validators.get(schema);
    if (validate === undefined) {
      validate = this.ajv.compile(schema);
      this.validators.set(schema, validate);
    }
    validate(payload);
    return validate.errors ?? [];
  }
}
