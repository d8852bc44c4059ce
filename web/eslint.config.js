// The dashboard's lint (npm run lint here; ctest's web_lint): names that exist and are used,
// no loose equality, no shadowed names, short functions, and the layout of app.js's comment
// kept: only app.js imports a view, and a view imports components and helpers, never a view.

import globals from 'globals';

const VIEW_IMPORT = {
    regex: '(^|/)views/',
    message: 'only app.js mounts a view: move what is shared into components/',
};

export default [
    {
        ignores: ['node_modules/**'],
    },
    {
        files: ['**/*.js'],
        languageOptions: {
            ecmaVersion: 2024,
            sourceType: 'module',
            // The dashboard runs in the browser; Chart.js is a classic script (vendor/).
            globals: {...globals.browser, Chart: 'readonly'},
        },
        linterOptions: {reportUnusedDisableDirectives: 'error'},
        rules: {
            'no-unused-vars': ['error', {args: 'after-used', argsIgnorePattern: '^_',
                caughtErrors: 'none'}],
            'no-undef': 'error',
            'eqeqeq': ['error', 'always'],
            'no-shadow': ['error', {builtinGlobals: false}],
            'no-redeclare': 'error',
            'no-dupe-keys': 'error',
            'no-unreachable': 'error',
            'no-self-assign': 'error',
            'no-fallthrough': 'error',
            'no-constant-condition': 'error',
            'no-var': 'error',
            'prefer-const': 'error',
            'max-lines-per-function': ['error', {max: 80, skipBlankLines: true,
                skipComments: true}],
            'no-restricted-imports': ['error', {patterns: [VIEW_IMPORT]}],
        },
    },
    {
        // Beside a view is another view: a view imports nothing from ./.
        files: ['views/*.js'],
        rules: {
            'no-restricted-imports': ['error', {patterns: [VIEW_IMPORT, {
                regex: '^\\./',
                message: 'a view imports no other view: move what is shared into components/',
            }]}],
        },
    },
    {
        files: ['app.js'],
        rules: {'no-restricted-imports': 'off'},
    },
    {
        files: ['eslint.config.js'],
        languageOptions: {globals: {...globals.node}},
    },
];
