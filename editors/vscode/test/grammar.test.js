// Tokenizes .insp files with the real TextMate engine (vscode-textmate + vscode-oniguruma, the
// ones VS Code runs) and checks what an author sees: no invalid scope, comments, strings,
// numbers, declaration keywords and validation names each get their scope.
// Usage: node test/grammar.test.js FILE...   (exit status 1 on any failure)
"use strict";

const fs = require("fs");
const path = require("path");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const GRAMMAR = path.join(__dirname, "..", "syntaxes", "insp.tmLanguage.json");
const WASM = path.join(path.dirname(require.resolve("vscode-oniguruma")), "onig.wasm");

async function loadGrammar() {
  await oniguruma.loadWASM(fs.readFileSync(WASM).buffer);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async (scopeName) =>
      scopeName === "source.insp"
        ? vsctm.parseRawGrammar(fs.readFileSync(GRAMMAR, "utf8"), GRAMMAR)
        : null,
  });
  return registry.loadGrammar("source.insp");
}

// The scopes of every character of a line.
function scopesOf(grammar, line, state) {
  const result = grammar.tokenizeLine(line, state);
  const scopes = new Array(line.length).fill(null);
  for (const token of result.tokens) {
    for (let i = token.startIndex; i < Math.min(token.endIndex, line.length); i++) {
      scopes[i] = token.scopes;
    }
  }
  return { scopes, state: result.ruleStack, tokens: result.tokens };
}

const DECLARATION = /^(include|template|settings|variable|product|consumer|image|input|feature|on|check|verdict|let)\b/;

function checkFile(grammar, file) {
  const problems = [];
  const counts = { comment: 0, string: 0, number: 0, keyword: 0, validation: 0, function: 0 };
  let state = vsctm.INITIAL;
  let inRule = false; // inside an `on EVENT` block: every indented line is a statement
  const lines = fs.readFileSync(file, "utf8").split("\n");
  lines.forEach((line, n) => {
    const where = `${path.basename(file)}:${n + 1}`;
    const { scopes, state: next, tokens } = scopesOf(grammar, line, state);
    state = next;
    const has = (i, part) => scopes[i] && scopes[i].some((s) => s.includes(part));
    if (/^[^\s#]/.test(line)) inRule = /^on\s/.test(line);
    // A statement's first word is a keyword, whichever statement it is (`set`, `if`, a new one).
    const statement = inRule ? /^\s+([a-z]+)\b/.exec(line) : null;
    if (statement) {
      if (!has(line.indexOf(statement[1]), "keyword.control")) {
        problems.push(`${where}: statement '${statement[1]}' is not a keyword`);
      }
      counts.statement = (counts.statement || 0) + 1;
    }
    for (const token of tokens) {
      if (token.scopes.some((s) => s.includes("invalid"))) problems.push(`${where}: invalid scope`);
    }
    const trimmed = line.trimStart();
    if (trimmed.startsWith("#")) {
      const start = line.length - trimmed.length;
      for (let i = start; i < line.length; i++) {
        if (!has(i, "comment.line")) {
          problems.push(`${where}:${i + 1}: comment not scoped as a comment`);
          break;
        }
      }
      counts.comment++;
      return;
    }
    const declaration = DECLARATION.exec(line);
    if (declaration) {
      if (!has(0, "keyword.other.declaration")) problems.push(`${where}: '${declaration[1]}' is not a keyword`);
      counts.keyword++;
    }
    const validate = /^\s+validate\s+(\w+)/.exec(line);
    if (validate) {
      const at = line.indexOf(validate[1], line.indexOf("validate") + 8);
      if (!has(at, "support.constant.validation")) problems.push(`${where}: validation '${validate[1]}' not scoped`);
      counts.validation++;
    }
    // Each option after a comma on a `validate` line is a modifier (`review below confidence 90`).
    if (validate) {
      const options = /,\s*([a-z][a-z ]*[a-z])/g;
      let option;
      while ((option = options.exec(line)) !== null) {
        if (has(option.index, "comment")) break;
        const at = option.index + option[0].indexOf(option[1]);
        if (!has(at, "storage.modifier")) problems.push(`${where}: option '${option[1]}' not scoped`);
        counts.modifier = (counts.modifier || 0) + 1;
      }
    }
    const verdictLine = /^\s+(disapprove|review|approve|otherwise)\b/.exec(line);
    if (verdictLine && !has(line.indexOf(verdictLine[1]), "keyword.control.verdict")) {
      problems.push(`${where}: '${verdictLine[1]}' is not a verdict keyword`);
    }
    // A reason's `{VALUE}` is an expression inside the string (`{{` writes a brace).
    const reason = /^\s+(disapprove|review|otherwise|reason\s+[a-z]{2}_[A-Z]{2}\s*:)\s+"/.exec(line);
    if (reason) {
      const open = line.search(/(?<!\{)\{(?!\{)/);
      if (open >= 0 && !has(open + 1, "meta.embedded.expression")) {
        problems.push(`${where}:${open + 2}: the reason's value is not scoped as an expression`);
      }
      if (open >= 0) counts.interpolation = (counts.interpolation || 0) + 1;
    }
    // Strings and numbers outside comments.
    const literal = /"(?:[^"\\]|\\.)*"|(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?![A-Za-z0-9_])/g;
    let match;
    while ((match = literal.exec(line)) !== null) {
      const i = match.index;
      if (has(i, "comment")) break;
      if (has(i, "string") && !match[0].startsWith('"')) continue; // a number inside a string
      if (match[0].startsWith('"')) {
        for (let j = i; j < i + match[0].length; j++) {
          if (!has(j, "string.quoted.double")) {
            problems.push(`${where}:${j + 1}: string not scoped as a string`);
            break;
          }
        }
        counts.string++;
      } else {
        if (!has(i, "constant.numeric")) problems.push(`${where}:${i + 1}: number ${match[0]} not scoped`);
        counts.number++;
      }
    }
    // `if C then A else B` inside an expression: its words are keywords.
    const conditional = /\b(then|else)\b/g;
    while ((match = conditional.exec(line)) !== null) {
      if (has(match.index, "comment") || has(match.index, "string")) continue;
      if (!has(match.index, "keyword.control")) problems.push(`${where}: '${match[1]}' not scoped`);
      counts.conditional = (counts.conditional || 0) + 1;
    }
    const call = /\b([a-z_]+)\(/g;
    while ((match = call.exec(line)) !== null) {
      if (!has(match.index, "comment") && !has(match.index, "string")) {
        if (!has(match.index, "support.function")) problems.push(`${where}: function '${match[1]}' not scoped`);
        counts.function++;
      }
    }
  });
  return { problems, counts };
}

async function main() {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error("usage: node test/grammar.test.js FILE...");
    process.exit(2);
  }
  const grammar = await loadGrammar();
  let failed = 0;
  const totals = {};
  for (const file of files) {
    const { problems, counts } = checkFile(grammar, file);
    for (const [k, v] of Object.entries(counts)) totals[k] = (totals[k] || 0) + v;
    for (const problem of problems) console.error(problem);
    failed += problems.length;
  }
  console.log(JSON.stringify({ files: files.length, problems: failed, checked: totals }));
  process.exit(failed ? 1 : 0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
