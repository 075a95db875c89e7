"""Iterative walks over expressions that several stages share: an expression's children, the
lets an expression reads, and the lets in an order where each comes after those it reads. None
of them recurses, so no input, however long a chain of lets or however deep an expression, can
drive them past Python's recursion limit (issue 33)."""

from __future__ import annotations

from collections.abc import Iterator

from inspectlang import ast


def children(node: ast.Expr) -> Iterator[ast.Expr]:
    match node:
        case ast.Binary(left=left, right=right):
            yield left
            yield right
        case ast.Unary(operand=operand):
            yield operand
        case ast.Conditional(condition=condition, then=then, otherwise=otherwise):
            yield condition
            yield then
            yield otherwise
        case ast.Attribute(value=value):
            yield value
        case ast.Call(arguments=arguments):
            yield from arguments
        case ast.ListExpr(items=items):
            yield from items
        case ast.Quantifier(collection=collection, condition=condition, value=value):
            yield collection
            if condition is not None:
                yield condition
            if value is not None:
                yield value


def dependencies_first(
    sources: dict[str, ast.LetDecl], decls: list[ast.LetDecl]
) -> Iterator[tuple[ast.LetDecl, tuple[str, ...]]]:
    """The lets in an order where each comes after the lets it reads, each with the lets that
    a depth-first walk from the first in file order was still inside when it got there (what
    `check_let` would have had in progress had it recursed from one use to the next). Checked
    in this order, a use always finds its let already checked, or in progress (E041 at the same
    use as the recursion would report it), so no chain of lets, however long, makes the checker
    recurse (issue 33: 250 lets each reading the next one ended in a RecursionError)."""
    done: set[str] = set()
    for start in decls:
        if start.name in done or sources.get(start.name) is not start:
            continue
        done.add(start.name)
        stack: list[tuple[str, Iterator[str]]] = [
            (start.name, iter(lets_read(sources[start.name].value, sources)))
        ]
        while stack:
            name, pending = stack[-1]
            following = next((n for n in pending if n not in done), None)
            if following is not None:
                done.add(following)
                stack.append((following, iter(lets_read(sources[following].value, sources))))
                continue
            stack.pop()
            yield sources[name], tuple(outer for outer, _ in stack)


def lets_read(expression: ast.Expr, sources: dict[str, ast.LetDecl]) -> list[str]:
    """The lets an expression names, in the order the expression checker meets them (a name
    a quantifier binds is its item, not a let)."""
    found: list[str] = []
    pending: list[tuple[ast.Expr, frozenset[str]]] = [(expression, frozenset())]
    while pending:
        node, bound = pending.pop()
        if isinstance(node, ast.Name):
            if node.name in sources and node.name not in bound:
                found.append(node.name)
        elif isinstance(node, ast.Quantifier):
            inner = bound | {node.variable} if node.variable is not None else bound
            pending.extend(
                (child, inner) for child in (node.value, node.condition) if child is not None
            )
            pending.append((node.collection, bound))
        else:
            pending.extend((child, bound) for child in reversed(tuple(children(node))))
    return found
