"""The Lambda expression language: what it computes, what it refuses, and the code it prints."""

from __future__ import annotations

import ast
import builtins
import contextlib
import pickle
import random
from typing import Any

import pytest
import torch

from dragdl.engine.graph.expr import (
    CONSTANTS,
    FUNCTIONS,
    MAX_DEPTH,
    MAX_NODES,
    ExprError,
    Expression,
    parse_expression,
)

IMAGE = torch.tensor([[[0.0, 0.25, 0.5], [0.75, 1.0, 0.5]]] * 3)  # (3, 2, 3)


def run(source: str, x: torch.Tensor) -> torch.Tensor:
    return parse_expression(source)(x)


def rejected(source: str) -> ExprError:
    with pytest.raises(ExprError) as info:
        parse_expression(source)
    return info.value


# --- values ---------------------------------------------------------------------------------------


def test_invert_gives_one_minus_x() -> None:
    torch.testing.assert_close(run("1 - x", IMAGE), 1 - IMAGE)


def test_contrast_with_clamp_stays_in_unit_range() -> None:
    out = run("clamp(x * 1.5 - 0.2, 0, 1)", IMAGE)
    torch.testing.assert_close(out, (IMAGE * 1.5 - 0.2).clamp(0, 1))
    assert out.min() == 0 and out.max() == 1


def test_threshold_with_where_gives_binary_image() -> None:
    out = run("where(x > 0.5, 1.0, 0.0)", IMAGE)
    assert out[0].tolist() == [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]


def test_comparison_gives_float_mask_that_composes_with_arithmetic() -> None:
    out = run("(x >= 0.5) * x", IMAGE)
    assert out.dtype == torch.float32
    assert out[0].tolist() == [[0.0, 0.0, 0.5], [0.75, 1.0, 0.5]]


def test_chained_comparison_is_a_band() -> None:
    assert run("0.25 < x < 0.75", IMAGE)[0].tolist() == [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]


def test_standardize_works_per_sample_in_a_batch() -> None:
    batch = torch.stack([torch.rand(3, 4, 4), torch.rand(3, 4, 4) * 10 + 5])
    out = run("(x - mean(x)) / (std(x) + 1e-6)", batch)
    assert out.shape == batch.shape
    torch.testing.assert_close(out.mean(dim=(1, 2, 3)), torch.zeros(2), atol=1e-5, rtol=0)
    torch.testing.assert_close(out.std(dim=(1, 2, 3)), torch.ones(2), atol=1e-4, rtol=0)


def test_min_max_reductions_are_per_sample() -> None:
    batch = torch.stack([IMAGE, IMAGE * 0.5])
    out = run("(x - amin(x)) / (amax(x) - amin(x))", batch)
    torch.testing.assert_close(out, torch.stack([IMAGE, IMAGE]))


def test_flips_reverse_last_and_second_to_last_dims() -> None:
    torch.testing.assert_close(run("hflip(x)", IMAGE), IMAGE.flip(-1))
    torch.testing.assert_close(run("vflip(x)", IMAGE), IMAGE.flip(-2))
    batch = torch.rand(2, 3, 4, 5)
    torch.testing.assert_close(run("hflip(vflip(x))", batch), batch.flip(-1, -2))


def test_gray_averages_channels_and_keeps_the_channel_count() -> None:
    x = torch.stack([torch.zeros(2, 2), torch.ones(2, 2), torch.full((2, 2), 0.5)])
    out = run("gray(x)", x)
    assert out.shape == (3, 2, 2)
    torch.testing.assert_close(out, torch.full((3, 2, 2), 0.5))


def test_number_alone_gives_a_constant_image_of_x_shape() -> None:
    out = run("0.5", IMAGE)
    assert out.shape == IMAGE.shape and out.dtype == IMAGE.dtype
    assert bool((out == 0.5).all())


def test_reduction_alone_is_expanded_to_x_shape() -> None:
    batch = torch.stack([IMAGE, IMAGE * 0])
    out = run("mean(x)", batch)
    assert out.shape == batch.shape
    assert bool((out[0] == IMAGE.mean()).all()) and bool((out[1] == 0).all())


def test_constants_pi_and_e_and_number_parts() -> None:
    torch.testing.assert_close(
        run("sin(pi * x) + e * 0 + 2 ** 0.5 * x", IMAGE), torch.sin(torch.pi * IMAGE) + 2**0.5 * IMAGE
    )


def test_powers_with_small_constant_exponents() -> None:
    x = IMAGE + 1
    torch.testing.assert_close(run("x ** 2 + x ** -1 + x ** 0.5", x), x**2 + 1 / x + x.sqrt())
    torch.testing.assert_close(run("-x ** 2", x), -(x**2))


def test_minimum_maximum_accept_a_number_or_a_tensor() -> None:
    torch.testing.assert_close(run("minimum(x, 0.5)", IMAGE), IMAGE.clamp(max=0.5))
    torch.testing.assert_close(run("maximum(0.5, x)", IMAGE), IMAGE.clamp(min=0.5))
    torch.testing.assert_close(run("minimum(x, hflip(x))", IMAGE), torch.minimum(IMAGE, IMAGE.flip(-1)))


def test_clamp_accepts_a_tensor_bound_next_to_a_number() -> None:
    torch.testing.assert_close(run("clamp(x, mean(x), 1)", IMAGE), IMAGE.clamp(min=float(IMAGE.mean())))


@pytest.mark.parametrize(
    "name",
    ["abs", "sqrt", "exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "floor", "ceil", "round", "sign"],
)
def test_elementwise_functions_match_torch(name: str) -> None:
    x = IMAGE * 4 - 1.5
    torch.testing.assert_close(run(f"{name}(x)", x), getattr(torch, name)(x), equal_nan=True)


def test_double_input_keeps_its_dtype() -> None:
    assert run("clamp(x * 2, 0, 1) + mean(x)", IMAGE.double()).dtype == torch.float64


def test_newlines_and_leading_spaces_are_whitespace() -> None:
    torch.testing.assert_close(run("  clamp(x,\n\t0.2, 0.8)", IMAGE), IMAGE.clamp(0.2, 0.8))


def test_integer_input_is_refused() -> None:
    with pytest.raises(ExprError, match="floating-point"):
        run("x", torch.zeros(3, 2, 2, dtype=torch.uint8))


# --- refusals --------------------------------------------------------------------------------------

ESCAPES = [
    ("x.__class__", "attribute access (.__class__) is not allowed"),
    ("().__class__.__bases__[0].__subclasses__()", "tuples are not allowed"),
    ("x.__class__.__bases__[0].__subclasses__()", "attribute access (.__class__)"),
    ("__import__('os').system('ls')", "unknown function '__import__'"),
    ("open('/etc/passwd')", "unknown function 'open'; allowed: abs, sqrt"),
    ("getattr(x, 'numpy')", "unknown function 'getattr'"),
    ('"{0.__class__}".format(x)', "string constants are not allowed"),
    ('f"{x}"', "f-strings are not allowed"),
    ("lambda: 1", "lambda is not allowed"),
    ("[i for i in range(10)]", "comprehensions are not allowed"),
    ("(y := 1)", "assignment (:=) is not allowed"),
    ("x[0]", "indexing and slicing (x[...]) are not allowed; use hflip"),
    ("9**9**9", "the exponent of ** must be a number"),
    ("2**x", "the exponent of ** must be a number"),
    ("x**100", "the exponent 100 is too large"),
    ("x**1000", "the exponent 1000 is too large"),
    ("10**400", "the exponent 400 is too large"),
    ("x * 1e400", "the number 1e400 is out of range"),
    ("x * 10000000", "out of range"),
    ("x * 1000 ** 3", "'1000 ** 3' is not a real number of size at most 1,000,000"),
    ("x / (1 / 0)", "'1 / 0' cannot be computed"),
    ("x + (-8) ** 0.5", "is not a real number"),
    ("clamp(x)", "clamp() takes 3 argument(s), got 1: clamp(x, lo, hi)"),
    ("clamp(x, lo=0, hi=1)", "keyword arguments are not allowed; call clamp(x, lo, hi)"),
    ("clamp(*x, 0, 1)", "unpacking (*) is not allowed"),
    ("x and x", "'and' and 'or' are not allowed; use where"),
    ("x or 1", "'and' and 'or' are not allowed"),
    ("x if x > 0 else 0", "use where(cond, a, b)"),
    ("not x", "'not' and '~' are not allowed"),
    ("~x", "'not' and '~' are not allowed"),
    ("x @ x", "this operator is not allowed"),
    ("x << 1", "this operator is not allowed"),
    ("x is x", "'is' and 'in' are not allowed"),
    ("'abc'", "string constants are not allowed"),
    ("b'abc' * x", "string constants are not allowed"),
    ("None", "the constant None is not allowed"),
    ("x + ...", "the constant Ellipsis is not allowed"),
    ("x * 1j", "the constant 1j is not allowed"),
    ("y", "unknown name 'y'"),
    ("x + __builtins__", "unknown name '__builtins__'"),
    ("abs", "'abs' is a function; call it as abs(x)"),
    ("x(1)", "unknown function 'x'"),
    ("sqrt(2)", "argument 'x' of sqrt() must depend on x"),
    ("minimum(1, 2)", "minimum() needs an argument that depends on x"),
    ("where(1, x, 0)", "argument 'cond' of where() must depend on x"),
    ("[x]", "lists are not allowed"),
    ("{x}", "sets are not allowed"),
    ("{1: x}", "dicts are not allowed"),
    ("x +", "syntax error"),
    ("", "expression is empty"),
    ("x\x00", "null bytes"),
]


@pytest.mark.parametrize(("source", "message"), ESCAPES, ids=[s[:30] or "empty" for s, _ in ESCAPES])
def test_escape_attempts_are_rejected_with_a_helpful_message(source: str, message: str) -> None:
    assert message in rejected(source).message


def test_error_names_the_column_of_the_offending_construct() -> None:
    error = rejected("x.__class__")
    assert error.column == 2
    assert str(error) == "attribute access (.__class__) is not allowed at column 2"
    assert rejected("clamp(x, 0, 1) + open('f')").column == 18
    assert rejected("  1 + y").column == 7
    assert rejected("x + * 2").column == 5
    assert rejected("x +").column == 4


def test_overlong_source_is_rejected_before_parsing() -> None:
    assert "too long: 10000 characters" in rejected("x+" * 5000).message


def test_deep_brackets_are_rejected() -> None:
    assert "nested too deeply" in rejected("(" * 200 + "x" + ")" * 200).message
    assert "nested too deeply" in rejected("(" * (MAX_DEPTH + 1) + "x" + ")" * (MAX_DEPTH + 1)).message
    parse_expression("(" * MAX_DEPTH + "x" + ")" * MAX_DEPTH)


def test_deep_trees_without_brackets_are_rejected() -> None:
    assert "nested too deeply" in rejected("-" * 200 + "x").message
    assert "nested too deeply" in rejected("+".join(["x"] * 40)).message


def test_too_many_terms_are_rejected() -> None:
    group = "(" + "+".join(["x"] * 10) + ")"
    parse_expression("+".join([group] * 5))  # 5 * 19 + 4 = 99 nodes
    error = rejected("+".join([group] * 6))
    assert f"at most {MAX_NODES}" in error.message


def test_user_source_is_only_ever_compiled_to_an_ast(monkeypatch: pytest.MonkeyPatch) -> None:
    real_compile = builtins.compile

    def ast_only_compile(*args: Any, **kwargs: Any) -> Any:
        flags = kwargs.get("flags", args[3] if len(args) > 3 else 0)
        assert flags & ast.PyCF_ONLY_AST, "user source compiled to code"
        return real_compile(*args, **kwargs)

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("eval/exec called")

    monkeypatch.setattr(builtins, "compile", ast_only_compile)
    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    expr = parse_expression("where(x > 0.5, clamp(x * 2, 0, 1), sqrt(x))")
    expr(IMAGE)
    expr.to_code()
    expr.check_shape((3, 8, 8))


# --- check_shape ------------------------------------------------------------------------------------


def test_check_shape_accepts_a_broadcast_result() -> None:
    parse_expression("mean(x)").check_shape((3, 8, 8))
    parse_expression("gray(x) - amin(x)").check_shape((4, 3, 8, 8))


def test_check_shape_rejects_an_integer_result() -> None:
    with pytest.raises(ExprError, match=r"not a float; write 1\.0"):
        parse_expression("where(x > 0.5, 1, 0)").check_shape((3, 8, 8))


def test_check_shape_rejects_an_input_the_functions_cannot_take() -> None:
    with pytest.raises(ExprError, match=r"failed on a tensor of shape \(8, 8\)"):
        parse_expression("gray(x)").check_shape((8, 8))


# --- to_code ------------------------------------------------------------------------------------------

EQUIVALENT = [
    "clamp(x * 1.5 - 0.2, 0, 1)",
    "where(x > 0.5, 1.0, 0.0)",
    "where(x - 0.5, x, 1 - x)",
    "where(mean(x) > 0.5, x, 1 - x)",
    "(x - mean(x)) / (std(x) + 1e-6)",
    "(amax(x) - x) / (amax(x) - amin(x) + 1e-6)",
    "hflip(vflip(x)) * 0.5",
    "gray(x) * 0.5 + gray(mean(x))",
    "-x ** 2 + (-x) ** 2 - x ** -2",
    "x - (x - 1) / (2 * x + 1) // 0.25 % 2",
    "--x + +x",
    "0.25 < x < 0.75",
    "1 < 2 < x",
    "(x > 0.5) > 0.5",
    "(1 < 2) * x",
    "2 ** 0.5 * pi * x + e",
    "clamp(x, mean(x), 1) + clamp(x, 0.1, amax(x)) + clamp(x, amin(x), amax(x))",
    "minimum(x, 0.5) + maximum(0.2, x) + minimum(x, hflip(x))",
    "0.5",
    "1 < 2",
    "std(x)",
    "abs(sin(x)) + sqrt(x) + exp(-x) + log(x + 1) + tanh(sigmoid(relu(cos(x))))",
    "floor(x * 4) + ceil(x * 4) + round(x * 4) + sign(x - 0.5)",
]


@pytest.mark.parametrize("source", EQUIVALENT)
@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 3, 4, 5)])
def test_generated_code_computes_the_same_result(source: str, shape: tuple[int, ...]) -> None:
    expr = parse_expression(source)
    x = torch.rand(shape)
    expected = expr(x)
    generated = eval(expr.to_code("img"), {"torch": torch, "img": x})  # test only: it is our own output
    torch.testing.assert_close(torch.as_tensor(generated).expand_as(x), expected, equal_nan=True)
    assert generated.shape == x.shape


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("clamp(x * 1.5 - 0.2, 0, 1)", "torch.clamp(x * 1.5 - 0.2, 0, 1)"),
        ("where(x > 0.5, 1.0, 0.0)", "torch.where(x > 0.5, 1.0, 0.0)"),
        ("mean(x)", "x.mean(dim=(-3, -2, -1), keepdim=True).expand_as(x)"),
        (
            "(x - mean(x)) / std(x)",
            "(x - x.mean(dim=(-3, -2, -1), keepdim=True)) / x.std(dim=(-3, -2, -1), keepdim=True)",
        ),
        ("hflip(x)", "torch.flip(x, dims=(-1,))"),
        ("1 - x", "1 - x"),
        ("0.5", "torch.full_like(x, 0.5)"),
        ("0.2 < x < 0.8", "((0.2 < x) & (x < 0.8)).to(x.dtype)"),
        ("minimum(x, 0.5)", "torch.clamp(x, max=0.5)"),
    ],
)
def test_generated_code_reads_like_plain_pytorch(source: str, code: str) -> None:
    assert parse_expression(source).to_code() == code


def test_to_code_refuses_a_variable_that_is_not_an_identifier() -> None:
    with pytest.raises(ValueError, match="identifier"):
        parse_expression("x").to_code("x); import os; (")


# --- the function table and the Expression object ------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_listed_function_runs_and_prints_equivalent_code(name: str) -> None:
    spec = FUNCTIONS[name]
    assert spec.arity == len(spec.params) and spec.help
    args = ["x > 0.5" if param == "cond" else "x" for param in spec.params]
    expr = parse_expression(f"{name}({', '.join(args)})")
    x = torch.rand(2, 3, 4, 4)
    generated = eval(expr.to_code(), {"torch": torch, "x": x})  # test only: it is our own output
    torch.testing.assert_close(generated, expr(x), equal_nan=True)


def test_constants_are_pi_and_e() -> None:
    assert set(CONSTANTS) == {"pi", "e"}


def test_pickle_round_trip_keeps_source_and_behaviour() -> None:
    expr = parse_expression("clamp(x * 1.5 - 0.2, 0, 1)")
    copy = pickle.loads(pickle.dumps(expr))
    assert copy == expr and copy.source == expr.source
    torch.testing.assert_close(copy(IMAGE), expr(IMAGE))


class _ForgedPickle:
    def __reduce__(self) -> tuple[Any, ...]:
        return (Expression, ("open('/etc/passwd')",))


def test_unpickling_checks_the_source_again() -> None:
    with pytest.raises(ExprError, match="unknown function 'open'"):
        pickle.loads(pickle.dumps(_ForgedPickle()))


def test_expressions_compare_and_hash_by_source() -> None:
    assert parse_expression("1 - x") == Expression("1 - x")
    assert len({parse_expression("1 - x"), parse_expression("1 - x")}) == 1
    assert "tree" not in repr(parse_expression("x"))


def test_random_token_soup_only_ever_raises_expr_error() -> None:
    soup = "x 1 0 2.5 1e6 pi ( ) , + - * / // % ** < == not and if else [ ] . __class__ 's' lambda : = "
    tokens = (soup + "clamp where mean sqrt gray hflip minimum ~ @ 1j None :=").split()
    rng = random.Random(0)
    accepted = 0
    for _ in range(3000):
        source = " ".join(rng.choice(tokens) for _ in range(rng.randint(1, 12)))
        try:
            expr = parse_expression(source)
        except ExprError:
            continue
        accepted += 1
        with contextlib.suppress(ExprError):
            expr.check_shape((2, 3, 4, 4))
    assert accepted > 0
