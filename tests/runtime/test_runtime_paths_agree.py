"""Property: the compiled path and the reference path agree on generated IR and data.

Hypothesis builds well-typed IR expressions over variables, possibly missing inputs and
product fields, list literals and quantifiers, and data with zeros, huge numbers and long
texts; both paths must return the same value and record the same rule errors.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime import codegen
from runtime.errors import StepLimitExceeded
from runtime.evaldata import empty_env
from runtime.expression import Context, compile_ir, context_template
from runtime.reference import ReferenceEvaluator
from runtime.verify import Verifier

SPAN = [1, 1, 1, 2]
VARIABLES = {"n1": "numeric", "n2": "numeric", "t1": "text"}
INPUTS = {"input_n": "numeric", "input_t": "text", "input_b": "check"}
Node = dict[str, Any]


def node(**fields: Any) -> Node:
    return {"span": SPAN, **fields}


numbers = st.one_of(
    st.integers(-5, 5),
    st.sampled_from([0, 0.5, -2.5, 1e14, 99999999, 1e15]),
)
texts = st.sampled_from(["", "a", "AbC", "plate", "ß", "x" * 6000])
dates = st.sampled_from(["2024-01-31", "2000-02-29", "9999-12-31", "0001-01-01"])


def leaves(kind: str) -> st.SearchStrategy[Node]:
    if kind == "number":
        return st.one_of(
            numbers.map(lambda v: node(op="literal", value=v)),
            st.sampled_from(["n1", "n2"]).map(lambda n: node(op="var", name=n)),
            st.just(node(op="input", id="input_n")),
            st.just(node(op="product", field="year")),
        )
    if kind == "date":
        return st.one_of(
            dates.map(lambda v: node(op="literal", value=v, type="date")),
            st.just(node(op="now")),
            st.just(node(op="consumer", field="birthdate")),
        )
    if kind == "text":
        return st.one_of(
            texts.map(lambda v: node(op="literal", value=v)),
            st.just(node(op="var", name="t1")),
            st.just(node(op="input", id="input_t")),
            st.just(node(op="product", field="plate")),
        )
    return st.one_of(
        st.booleans().map(lambda v: node(op="literal", value=v)),
        st.just(node(op="input", id="input_b")),
    )


def expressions(kind: str, depth: int) -> st.SearchStrategy[Node]:
    if depth <= 0:
        return leaves(kind)
    if kind == "date":
        return st.one_of(
            leaves("date"),
            st.tuples(expressions("date", depth - 1), expressions("number", depth - 1)).map(
                lambda t: node(op="call", fn="add_days", args=[t[0], t[1]])
            ),
        )
    sub_number = expressions("number", depth - 1)
    sub_text = expressions("text", depth - 1)
    sub_bool = expressions("boolean", depth - 1)
    if kind == "number":
        return st.one_of(
            leaves("number"),
            st.tuples(st.sampled_from(["+", "-", "*", "/"]), sub_number, sub_number).map(
                lambda t: node(op="binary", operator=t[0], left=t[1], right=t[2])
            ),
            sub_number.map(lambda n: node(op="unary", operator="-", operand=n)),
            st.tuples(st.sampled_from(["abs", "round"]), sub_number).map(
                lambda t: node(op="call", fn=t[0], args=[t[1]])
            ),
            st.tuples(st.sampled_from(["min", "max"]), sub_number, sub_number).map(
                lambda t: node(op="call", fn=t[0], args=[t[1], t[2]])
            ),
            sub_text.map(lambda t: node(op="call", fn="length", args=[t])),
            st.tuples(st.sampled_from(["percentage"]), sub_number).map(
                lambda t: node(
                    op="sum",
                    var="d",
                    over=node(op="damages"),
                    value=node(
                        op="binary",
                        operator="*",
                        left=node(op="field", of=node(op="local", name="d"), name=t[0]),
                        right=t[1],
                    ),
                )
            ),
            st.tuples(st.sampled_from(["minor", "severe"]), sub_number).map(
                lambda t: node(
                    op="count",
                    var="v",
                    over=node(op="validations"),
                    where=node(
                        op="binary",
                        operator=">=",
                        left=node(op="field", of=node(op="local", name="v"), name="confidence"),
                        right=t[1],
                    ),
                )
            ),
            st.tuples(
                st.sampled_from(["days_between", "years_between"]),
                expressions("date", depth - 1),
                expressions("date", depth - 1),
            ).map(lambda t: node(op="call", fn=t[0], args=[t[1], t[2]])),
            st.lists(sub_number, max_size=3).map(
                lambda items: node(
                    op="sum",
                    var="x",
                    value=node(
                        op="binary",
                        operator="*",
                        left=node(op="local", name="x"),
                        right=node(op="literal", value=2),
                    ),
                    over=node(op="list", items=items, type="list<number>"),
                )
            ),
            st.tuples(st.lists(sub_number, max_size=3), sub_number).map(
                lambda t: node(
                    op="count",
                    var="x",
                    where=node(
                        op="binary", operator=">", left=node(op="local", name="x"), right=t[1]
                    ),
                    over=node(op="list", items=t[0], type="list<number>"),
                )
            ),
        )
    if kind == "text":
        return st.one_of(
            leaves("text"),
            st.tuples(sub_text, sub_text).map(
                lambda t: node(op="binary", operator="+", left=t[0], right=t[1])
            ),
            st.tuples(st.sampled_from(["lower", "upper", "trim"]), sub_text).map(
                lambda t: node(op="call", fn=t[0], args=[t[1]])
            ),
        )
    return st.one_of(
        leaves("boolean"),
        st.tuples(st.sampled_from(["and", "or"]), sub_bool, sub_bool).map(
            lambda t: node(op="binary", operator=t[0], left=t[1], right=t[2])
        ),
        sub_bool.map(lambda b: node(op="unary", operator="not", operand=b)),
        st.tuples(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), sub_number, sub_number).map(
            lambda t: node(op="binary", operator=t[0], left=t[1], right=t[2])
        ),
        st.tuples(st.sampled_from(["=", "!=", "<"]), sub_text, sub_text).map(
            lambda t: node(op="binary", operator=t[0], left=t[1], right=t[2])
        ),
        st.tuples(
            st.sampled_from(["contains", "starts_with", "ends_with"]), sub_text, sub_text
        ).map(lambda t: node(op="call", fn=t[0], args=[t[1], t[2]])),
        sub_number.map(lambda n: node(op="call", fn="defined", args=[n])),
        st.tuples(
            st.sampled_from(["=", "<", ">="]),
            expressions("date", depth - 1),
            expressions("date", depth - 1),
        ).map(lambda t: node(op="binary", operator=t[0], left=t[1], right=t[2])),
        st.tuples(sub_number, st.lists(sub_number, max_size=3)).map(
            lambda t: node(
                op="binary",
                operator="in",
                left=t[0],
                right=node(op="list", items=t[1], type="list<number>"),
            )
        ),
    )


def data() -> st.SearchStrategy[dict[str, Any]]:
    maybe_number = st.one_of(st.none(), numbers)
    maybe_text = st.one_of(st.none(), texts)
    return st.fixed_dictionaries(
        {
            "vars": st.fixed_dictionaries({"n1": numbers, "n2": numbers, "t1": texts}),
            "inputs": st.fixed_dictionaries(
                {
                    "input_n": maybe_number,
                    "input_t": maybe_text,
                    "input_b": st.one_of(st.none(), st.booleans()),
                }
            ),
            "product": st.fixed_dictionaries({"year": maybe_number, "plate": maybe_text}),
            "consumer": st.fixed_dictionaries({"birthdate": st.one_of(st.none(), dates)}),
            "damages": st.lists(
                st.fixed_dictionaries(
                    {
                        "part": st.just("door"),
                        "damage": st.just("dent"),
                        "severity": st.sampled_from(["minor", "severe"]),
                        "percentage": maybe_number,
                        "declared": st.booleans(),
                    }
                ),
                max_size=4,
            ),
            "validations": st.lists(
                st.fixed_dictionaries(
                    {
                        "name": st.just("plate"),
                        "valid": st.booleans(),
                        "confidence": numbers,
                        "result": maybe_text,
                        "ran": st.just(True),
                        "required": st.booleans(),
                    }
                ),
                max_size=4,
            ),
            "now": dates,
        }
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["number", "text", "boolean"]).flatmap(lambda k: expressions(k, 3)),
    values=data(),
)
def test_compiled_and_reference_agree(kind: Node, values: dict[str, Any]) -> None:
    expression = compile_ir(kind, variables=VARIABLES, inputs=INPUTS)
    compiled = expression.run(values, path="compiled")
    reference = expression.run(values, path="reference")
    assert compiled == reference
    assert type(compiled[0]) is type(reference[0])


def statements(depth: int) -> st.SearchStrategy[list[Node]]:
    """Rule bodies: `set` of well-typed values and `if` with generated conditions."""
    sets = st.one_of(
        st.tuples(st.sampled_from(["n1", "n2"]), expressions("number", 2)).map(
            lambda t: node(op="set", name=t[0], value=t[1])
        ),
        expressions("text", 2).map(lambda v: node(op="set", name="t1", value=v)),
    )
    if depth <= 0:
        return st.lists(sets, max_size=3)
    branch = st.tuples(expressions("boolean", 2), statements(depth - 1), statements(depth - 1))
    ifs = branch.map(lambda t: node(op="if", cond=t[0], then=t[1], **{"else": t[2]}))
    return st.lists(st.one_of(sets, ifs), max_size=3)


def run_rule(path: str, body: list[Node], values: dict[str, Any]) -> tuple[Any, ...]:
    context = Context(variables=VARIABLES, inputs=INPUTS, images=(), locals={})
    verifier = Verifier(context_template(context))
    normalized = verifier.statements(body, verifier.base, "rule")
    env = empty_env()
    env.update(copy.deepcopy(values))
    try:
        if path == "compiled":
            source = codegen.generate_rule("rule_0", normalized)
            codegen.compile_functions(source, "<rule>")["rule_0"](env)
        else:
            ReferenceEvaluator().statements(normalized, env)
        outcome = "done"
    except StepLimitExceeded:
        outcome = "step_limit"
    steps = env["steps"] if outcome == "done" else None
    return outcome, env["vars"], env["errors"], steps


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=statements(2), values=data())
def test_rules_agree_on_variables_errors_and_steps(
    body: list[Node], values: dict[str, Any]
) -> None:
    assert run_rule("compiled", body, values) == run_rule("reference", body, values)
