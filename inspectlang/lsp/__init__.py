"""Editor support for `.insp` files: a Language Server (`inspectlang lsp`).

`inspectlang.lsp.index` knows the language (symbols, references, hover texts, completions) and
needs nothing but `inspectlang`; `inspectlang.lsp.server` speaks the Language Server Protocol
through pygls, which is the optional `lsp` extra (`pip install 'inspectlang[lsp]'`).
docs/editors.md lists what the server does.
"""
