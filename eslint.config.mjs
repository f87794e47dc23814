// typescript-eslint with type-checked rules over every TypeScript file in the repo.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      'node_modules/**',
      'coverage/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
      'loadtest/out/**',
      'apps/order-status/public/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/require-await': 'off',
      'no-restricted-properties': [
        'error',
        { object: 'it', property: 'only', message: '.only must not be committed' },
        { object: 'describe', property: 'only', message: '.only must not be committed' },
        { object: 'test', property: 'only', message: '.only must not be committed' },
      ],
    },
  },
  {
    // A transport knows the connection life cycle, auth and the bus, nothing of ops: the
    // connection layer reports to ops (connections/connection-observer.ts).
    files: ['apps/order-status/src/transports/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)ops(/|$)',
              message:
                'A transport must not import ops/: report through ConnectionObserver (connections/).',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests poke at untyped wire data (JSON bodies, socket.io payloads) on purpose.
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
