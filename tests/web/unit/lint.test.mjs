// web/eslint.config.js keeps the layout app.js describes: a view never imports a view, only
// app.js imports views; and its rules catch what they are there for. Lints planted text with
// the pinned ESLint of web/node_modules (make deps installs it), skipped when it is missing.

import {test} from 'node:test';
import assert from 'node:assert/strict';
import {createRequire} from 'node:module';
import {fileURLToPath, pathToFileURL} from 'node:url';
import path from 'node:path';

const WEB = fileURLToPath(new URL('../../../web/', import.meta.url));

async function eslint() {
    try {
        const require = createRequire(path.join(WEB, 'package.json'));
        const {ESLint} = await import(pathToFileURL(require.resolve('eslint')).href);
        return new ESLint({cwd: WEB});
    } catch {
        return null;
    }
}

const linter = await eslint();
const skip = linter ? false : 'web/node_modules has no eslint (run: make deps)';

// The rules that text at file (relative to web/) breaks, sorted.
async function broken(text, file) {
    const [r] = await linter.lintText(text, {filePath: path.join(WEB, file)});
    return [...new Set(r.messages.map((m) => m.ruleId))].sort();
}

test('a view that imports a view fails the lint', {skip}, async () => {
    assert.deepEqual(await broken("import {mount} from './run.js';\nmount();\n", 'views/new.js'),
        ['no-restricted-imports']);
    assert.deepEqual(await broken("import {x} from '../views/run.js';\nx();\n", 'views/new.js'),
        ['no-restricted-imports']);
});

test('a component or helper that imports a view fails the lint', {skip}, async () => {
    assert.deepEqual(await broken("import {x} from '../views/run.js';\nx();\n",
        'components/new.js'), ['no-restricted-imports']);
    assert.deepEqual(await broken("import {x} from './views/run.js';\nx();\n", 'format2.js'),
        ['no-restricted-imports']);
});

test('a view may import components and helpers, and app.js views', {skip}, async () => {
    assert.deepEqual(await broken("import {h} from '../dom.js';\n" +
        "import {smallMultiples} from '../components/charts.js';\nh(smallMultiples);\n",
    'views/new.js'), []);
    assert.deepEqual(await broken("import {verdictWord} from './verdict.js';\nverdictWord();\n",
        'components/new.js'), []);
    assert.deepEqual(await broken("import * as run from './views/run.js';\nrun.mount();\n",
        'app.js'), []);
});

test('the lint finds unused and undefined names, loose equality, shadowing', {skip}, async () => {
    assert.deepEqual(await broken('const unused = 1;\n', 'format2.js'), ['no-unused-vars']);
    assert.deepEqual(await broken('export const f = () => missing;\n', 'format2.js'), ['no-undef']);
    assert.deepEqual(await broken('export const f = (a) => a == 1;\n', 'format2.js'), ['eqeqeq']);
    const shadow = 'const a = 1;\nexport const f = (a) => a;\nf(a);\n';
    assert.deepEqual(await broken(shadow, 'format2.js'), ['no-shadow']);
    // The browser's globals are known.
    assert.deepEqual(await broken('export const f = () => [document, location, CSS, Chart];\n',
        'format2.js'), []);
});

test('a function over 80 lines fails the lint', {skip}, async () => {
    const body = Array.from({length: 81}, (_v, i) => `    n += ${i};`).join('\n');
    const text = `export function mount() {\n    let n = 0;\n${body}\n    return n;\n}\n`;
    assert.deepEqual(await broken(text, 'views/new.js'), ['max-lines-per-function']);
});
