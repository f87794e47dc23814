import { join } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');

/** A property of a TypeScript type: its name and whether it may be absent. */
export interface Field {
  readonly name: string;
  readonly optional: boolean;
}

/**
 * Reads exported types of the project's sources with the TypeScript compiler, so a test
 * can compare a document with the interfaces themselves (they have no runtime shape).
 * Only the given files and what they import are loaded; nothing is type-checked.
 */
export class TypeReader {
  private readonly program: ts.Program;
  private readonly checker: ts.TypeChecker;

  constructor(files: readonly string[]) {
    const config = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, 'tsconfig.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
        },
      },
    );
    if (config === undefined) throw new Error('tsconfig.json not readable');
    this.program = ts.createProgram(
      files.map((f) => join(ROOT, f)),
      { ...config.options, noEmit: true },
    );
    this.checker = this.program.getTypeChecker();
  }

  /** The declared type of `name`, exported by `file`. */
  type(file: string, name: string): ts.Type {
    const source = this.program.getSourceFile(join(ROOT, file));
    if (source === undefined) throw new Error(`${file} not loaded`);
    const moduleSymbol = this.checker.getSymbolAtLocation(source);
    if (moduleSymbol === undefined) throw new Error(`${file} is not a module`);
    const symbol = this.checker.getExportsOfModule(moduleSymbol).find((s) => s.name === name);
    if (symbol === undefined) throw new Error(`${file} exports no ${name}`);
    const target =
      symbol.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(symbol) : symbol;
    return this.checker.getDeclaredTypeOfSymbol(target);
  }

  /**
   * The properties of `type` (inherited ones included), sorted by name. A property typed
   * `never` (`location?: never`, a discriminant that is never sent) is not a field.
   */
  fields(type: ts.Type): Field[] {
    return type
      .getProperties()
      .filter((p) => !(this.propertyType(p).flags & ts.TypeFlags.Never))
      .map((p) => ({ name: p.name, optional: (p.flags & ts.SymbolFlags.Optional) !== 0 }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The type of property `name` of `type`. */
  property(type: ts.Type, name: string): ts.Type {
    const symbol = type.getProperty(name);
    if (symbol === undefined) throw new Error(`no property ${name}`);
    return this.propertyType(symbol);
  }

  private propertyType(symbol: ts.Symbol): ts.Type {
    return this.checker.getNonNullableType(this.checker.getTypeOfSymbol(symbol));
  }

  /** The members of a union type (the type itself when it is not a union). */
  members(type: ts.Type): ts.Type[] {
    return type.isUnion() ? type.types : [type];
  }

  /** The string literal values of a (union of) string literal type(s). */
  stringLiterals(type: ts.Type): string[] {
    return this.members(type).map((t) => {
      if (!t.isStringLiteral())
        throw new Error(`${this.checker.typeToString(t)} is not a string literal`);
      return t.value;
    });
  }

  /** The property names of `type`, for event maps (`ServerToClientEvents`). */
  keys(type: ts.Type): string[] {
    return this.fields(type).map((f) => f.name);
  }
}
