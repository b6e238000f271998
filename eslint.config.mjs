// Only the type-aware rules that catch async bugs; Biome does formatting and the rest of linting.
import tseslint from 'typescript-eslint'

export default tseslint.config({ ignores: ['dist/**', 'node_modules/**'] }, {
  files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
  languageOptions: { parser: tseslint.parser, parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  plugins: { '@typescript-eslint': tseslint.plugin },
  linterOptions: { reportUnusedDisableDirectives: 'off' },
  rules: {
    '@typescript-eslint/no-floating-promises': 'error',
    '@typescript-eslint/no-misused-promises': 'error',
    '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    '@typescript-eslint/await-thenable': 'error',
  },
})
