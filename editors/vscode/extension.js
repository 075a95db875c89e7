// Starts `inspectlang lsp` (the command is the `inspectlang.server.command` setting) and connects
// it to .insp documents. Everything the editor shows besides colours comes from the server.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace
    .getConfiguration("inspectlang")
    .get("server.command", ["inspectlang", "lsp"]);
  const server = { command, args };
  client = new LanguageClient(
    "inspectlang",
    "inspectlang",
    { run: server, debug: server },
    { documentSelector: [{ language: "insp" }] },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
