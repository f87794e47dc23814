import { join } from 'node:path';
import ts from 'typescript';
import type { K8sObject } from './kustomize';
import { modelPath, type SchemaProblem } from './validate-objects';

/**
 * The API server rejects a field it does not know (`kubectl apply` validates strictly),
 * but kubernetes-models' schemas allow any extra field. Its TypeScript types list every
 * field, so each object is type-checked as an object literal of its kind's type, where
 * TypeScript reports any property the type does not declare (one per object).
 */
export function unknownFields(
  objects: readonly K8sObject[],
): (SchemaProblem & { readonly index: number })[] {
  // Beside this file, so `kubernetes-models` resolves from the project's node_modules.
  const file = join(__dirname, '__rendered-objects.ts');
  const source = objects
    .map(
      (o, i) =>
        `import type { I${o.kind} as T${i} } from '${modelPath(o)}';\n` +
        `export const o${i}: T${i} = ${JSON.stringify(o)};`,
    )
    .join('\n');
  const host = ts.createCompilerHost({});
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === file
      ? ts.createSourceFile(name, source, language)
      : getSourceFile(name, language, ...rest);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram(
    [file],
    {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      // The objects need no DOM: ES5's globals load in a fraction of the default libs' time.
      lib: ['lib.es5.d.ts'],
      module: ts.ModuleKind.Node20,
      moduleResolution: ts.ModuleResolutionKind.Node16,
    },
    host,
  );
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line =
      d.file === undefined || d.start === undefined
        ? -1
        : d.file.getLineAndCharacterOfPosition(d.start).line;
    // Each object is on its own line after its import: line 2i+1.
    const index = line >= 1 ? (line - 1) >> 1 : -1;
    const o = objects[index];
    return {
      index,
      object: o === undefined ? '?' : `${o.kind}/${o.metadata.name}`,
      message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
    };
  });
}
