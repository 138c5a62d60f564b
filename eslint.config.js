// ESLint for the pages' JavaScript and its DOM-free tests (npx eslint, run by tools/test.sh).
// A few rules that catch mistakes tsc does not (tsc already checks names, types and unused
// locals): strict equality, no var, const where nothing reassigns, no stray expression
// statements, no shadowed names, no console.log left behind, no duplicate imports. The
// vendored three.js is its own project's and is not linted.
export default [
  { ignores: ["src/freelook/web/static/vendor/**", "node_modules/**", ".venv/**"] },
  {
    files: ["src/freelook/web/static/*.js", "tests/js/*.js", "eslint.config.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module" },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      eqeqeq: ["error", "always"],
      "no-var": "error",
      "prefer-const": ["error", { destructuring: "all" }],
      "no-unused-vars": ["error", { args: "after-used", caughtErrors: "none" }],
      "no-unused-expressions": ["error", { allowTernary: true, allowShortCircuit: true }],
      "no-shadow": "error",
      "no-console": ["error", { allow: ["warn", "error"] }],
      "no-duplicate-imports": "error",
      "no-self-compare": "error",
      "no-unreachable": "error",
      "no-dupe-keys": "error",
      "no-fallthrough": "error",
      "no-cond-assign": "error",
    },
  },
];
