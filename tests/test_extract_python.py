"""The Python extractor: message forms, cross-file resolution at link, classes, factories."""

from __future__ import annotations

import ast
import io
import json
import string
import sys
import textwrap
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from errdex.analyze.templates import Built, template_part
from errdex.extract.files import SourceFile
from errdex.extract.python import PythonExtractor, module_name, split_lines
from errdex.match.compile import compile_template
from errdex.models import FileResult, Location, RaiseSite, SiteKind


def extract(files: dict[str, str]) -> list[FileResult]:
    extractor = PythonExtractor()
    return [
        extractor.extract(SourceFile(path, textwrap.dedent(source).encode()))
        for path, source in files.items()
    ]


def mine(files: dict[str, str]) -> list[RaiseSite]:
    return PythonExtractor().link(extract(files))


def one(sites: list[RaiseSite], line: int, path: str | None = None) -> RaiseSite:
    found = [s for s in sites if s.line == line and (path is None or s.path == path)]
    assert len(found) == 1, [(s.path, s.line, s.template.text) for s in found]
    return found[0]


def texts(sites: list[RaiseSite], line: int, path: str | None = None) -> list[str]:
    return sorted(s.template.text for s in sites if s.line == line and (path in (None, s.path)))


def test_a_built_template_is_a_value_equal_and_hashed_by_its_fields():
    """Built is a plain class (mypyc compiles it): equality and hash are its fields'."""
    parts = (template_part("bad "), template_part("x", hole=True))
    here = Location(path="m.py", line=3)
    same = Built(parts, "f-string", defined_at=here)
    assert same == Built(parts, "f-string", False, Location(path="m.py", line=3))
    assert hash(same) == hash(Built(parts, "f-string", defined_at=here))
    others = [
        Built(parts[:1], "f-string", defined_at=here),
        Built(parts, "format", defined_at=here),
        Built(parts, "f-string", True, here),
        Built(parts, "f-string"),
    ]
    assert all(other != same for other in others)
    assert len({same, *others, Built(parts, "f-string", defined_at=here)}) == 5
    assert same != (parts, "f-string", False, here)
    shown = "Built(parts=(), form='opaque', i18n=False, defined_at=None)"
    assert repr(Built((), "opaque")) == shown


SIMPLE = [
    "x",
    "self.config.size",
    "f(a, *rest, key=1, **extra)",
    "obj.method(x)[0].name",
    "'{}: {}'.format(a, b)",
    "d['key', 1]",
    "d[k,]",
    "d[()]",
    "d[(1, 2), 3]",
    "(a,)",
    "()",
    "(a, [b, None], ...)",
    "f((a, b), [])",
    "b'\\x00' + c",
    '"it\'s"',
    "'tab\\there'",
    "True or None",
    "f(x)(y)[z]",
    "float('inf')",
]
"""Expressions errdex writes itself (each comes out as ``ast.unparse`` writes it)."""

NOT_SIMPLE = [
    "1 .real",
    "(1).real",
    "u'text'",
    "1.5",
    "d[1:2]",
    "d[*k]",
    "f(x for x in y)",
    "-1",
    "a if b else c",
    "lambda: 0",
    "f'{x}'",
    "f(not a)",
    "[*a]",
    "{a: b}",
    "(a + b).c",
]
"""Expressions with an operator, a float or a spelling of their own: ``ast.unparse`` writes them."""


@pytest.mark.parametrize("text", SIMPLE + NOT_SIMPLE)
def test_unparse_writes_what_ast_unparse_writes(text):
    from errdex.analyze.templates import simple_text, unparse

    node = ast.parse(text, mode="eval").body
    assert unparse(node) == ast.unparse(node)
    written = simple_text(node)
    # Operators (``+``, ``or``) leave the whole expression to ast.unparse; their operands are
    # simple.
    if isinstance(node, (ast.BinOp, ast.BoolOp)):
        assert written is None
        assert all(
            simple_text(side) == ast.unparse(side)
            for side in ast.iter_child_nodes(node)
            if isinstance(side, ast.expr)
        )
    elif text in SIMPLE:
        assert written == ast.unparse(node)
    else:
        assert written is None


@pytest.mark.slow
def test_unparse_agrees_with_ast_unparse_on_every_expression_of_real_code():
    """Every expression of two real packages: the same text, and most of them written here."""
    from corpus import unpacked_wheel

    from errdex.analyze.templates import simple_text

    written = total = 0
    for root in (unpacked_wheel("click", "8.1.7"), unpacked_wheel("requests", "2.32.3")):
        for path in sorted(root.rglob("*.py")):
            tree = ast.parse(path.read_bytes())
            for node in ast.walk(tree):
                if isinstance(node, ast.expr):
                    total += 1
                    text = simple_text(node)
                    if text is not None:
                        written += 1
                        assert text == ast.unparse(node), (path, node.lineno)
    assert total > 25_000
    assert written > 0.8 * total, (written, total)


def test_an_exported_constant_with_a_lone_surrogate_is_linked_and_stored_escaped():
    """Exports are not validated: one that JSON cannot encode still takes the escaped way."""
    from errdex.pipeline import _encodable

    results = extract(
        {
            "pkg/texts.py": 'BAD = "bad \\ud800 {name}"\n',
            "pkg/use.py": "from pkg.texts import BAD\n\ndef f(name):\n"
            "    raise ValueError(BAD.format(name=name))\n",
        }
    )
    stored = [_encodable(result) for result in results]
    loaded = [FileResult.model_validate_json(payload) for _, payload in stored]
    assert "\\ud800" in stored[0][1] and loaded[0].exports == json.loads(stored[0][1])["exports"]
    (site,) = PythonExtractor().link(loaded)
    assert site.template.text == "bad \\ud800 {name}"


# -- forms at the site ------------------------------------------------------------------------


def test_inline_forms_and_their_form_names():
    sites = mine(
        {
            "m.py": """\
            import logging
            import warnings
            logger = logging.getLogger(__name__)

            def f(phase, n, d, obj):
                raise ValueError(f"Unknown phase: {phase!r:>10}")
                raise ValueError("a " "b")
                raise ValueError("bad {} and {name}".format(n, name=d))
                raise ValueError("bad %s/%d" % (n, d))
                raise ValueError("x: " + str(n) + "!")
                raise ValueError(", ".join(["a", n]))
                raise ValueError(_("hello %(who)s") % {"who": obj})
                logger.error("failed %s after %d tries", n, d)
                warnings.warn("old thing", DeprecationWarning)
                assert n, f"n is {n}"
                sys.exit("fatal: no config")
            """
        }
    )
    got = {s.line: (s.template.text, s.form) for s in sites}
    assert got == {
        6: ("Unknown phase: {phase}", "f-string"),
        7: ("a b", "constant"),
        8: ("bad {n} and {d}", "format"),
        9: ("bad {n}/{d}", "percent"),
        10: ("x: {n}!", "concat"),
        11: ("a, {n}", "join"),
        12: ("hello {obj}", "percent"),
        13: ("failed {n} after {d} tries", "percent"),
        14: ("old thing", "constant"),
        15: ("n is {n}", "f-string"),
        16: ("fatal: no config", "constant"),
    }
    assert one(sites, 16).kind is SiteKind.EXIT
    assert one(sites, 6).template.parts[1].style == "!r:>10"
    assert one(sites, 12).i18n
    assert one(sites, 13).kind is SiteKind.LOG and one(sites, 13).error_class == "ERROR"
    assert one(sites, 14).error_class == "DeprecationWarning"
    assert one(sites, 15).kind is SiteKind.ASSERT


def test_local_variables_give_one_site_per_branch_and_appends():
    sites = mine(
        {
            "m.py": """\
            def f(x, values):
                if x:
                    msg = "first"
                else:
                    msg = f"second {x}"
                msg += " (see docs)"
                raise ValueError(msg)

            def g(x):
                error_msg = ""
                if x > 1:
                    error_msg = "too big"
                if error_msg:
                    raise ValueError(error_msg)
            """
        }
    )
    assert texts(sites, 7) == ["first (see docs)", "second {x} (see docs)"]
    assert {s.form for s in sites if s.line == 7} == {"variable"}
    # ``msg = ""`` guarded by ``if msg:`` is never the message.
    assert texts(sites, 14) == ["too big"]


def test_a_local_name_set_to_unknown_text_on_one_path_stays_a_hole_there():
    # pip: ``info = text_join(sorted(triggers))`` or ``"the requested packages"``, then
    # ``f"Cannot install {info} because …"``; the first path's text is known only at run time.
    sites = mine(
        {
            "m.py": """\
            import logging
            logger = logging.getLogger(__name__)

            def conflict(triggers):
                if triggers:
                    info = text_join(sorted(triggers))
                else:
                    info = "the requested packages"
                logger.critical(f"Cannot install {info} because of conflicts.")

            def pick(x):
                if x:
                    msg = compute(x)
                else:
                    msg = "plain"
                raise ValueError(msg)
            """
        }
    )
    assert sorted(texts(sites, 9)) == [
        "Cannot install the requested packages because of conflicts.",
        "Cannot install {info} because of conflicts.",
    ]
    assert sorted(texts(sites, 16)) == ["plain", "{msg}"]


def test_a_joined_list_the_function_fills_starts_with_its_first_item():
    # pip's ``parts = []``, ``parts.append("pip's dependency resolver …")`` on each branch,
    # more appends in a loop, then ``logger.critical("\\n".join(parts))``.
    source = """\
        import logging
        logger = logging.getLogger(__name__)

        def conflicts(missing, variant):
            parts = []
            if variant == "legacy":
                parts.append("The legacy resolver does not consider conflicts.")
            else:
                parts.append(f"The {variant} resolver does not see installed packages.")
            for name in missing:
                parts.append(f"{name} requires a package, which is not installed.")
            logger.critical("\\n".join(parts))
            return "\\n".join(parts)

        def listed(items):
            lines = ["Invalid items:"]
            for item in items:
                lines.append(f"  - {item}")
            raise ValueError("\\n".join(lines))

        def maybe_empty(items):
            lines = []
            for item in items:
                lines.append(f"  - {item}")
            raise ValueError("\\n".join(lines))

        def reordered(items):
            lines = ["first"]
            lines.insert(0, "before it")
            raise ValueError(", ".join(lines))
        """
    sites = mine({"m.py": source})
    assert texts(sites, 12) == [
        "The legacy resolver does not consider conflicts.{parts}",
        "The {variant} resolver does not see installed packages.{parts}",
    ]
    assert texts(sites, 19) == ["Invalid items:{lines}"]
    assert sorted(texts(sites, 25)) == ["  - {item}{lines}", "{lines}"]
    assert texts(sites, 30) == ["{', '.join(lines)}"]  # its first item moved: unknown
    # Each template matches what the real function produces, whatever it is given.
    namespace: dict[str, object] = {}
    exec(textwrap.dedent(source), namespace)
    produced = [
        namespace["conflicts"](missing, variant)  # type: ignore[operator]
        for missing in ([], ["a"], ["a", "b"])
        for variant in ("legacy", "resolvelib")
    ]
    patterns = [compile_template(site.template) for site in sites if site.line == 12]
    for message in produced:
        assert any(pattern.match(message) is not None for pattern in patterns), message


def test_a_joined_sum_of_lists_starts_with_the_literal_lists_items():
    # pydantic's ``"\\n".join(["Valid config keys have changed in V2:"] + renamed + removed)``.
    source = """\
        import warnings

        def prepare(renamings, removed):
            renamed = [f"* {k!r} has been renamed to {v!r}" for k, v in renamings.items()]
            gone = [f"* {k!r} has been removed" for k in sorted(removed)]
            message = "\\n".join(["Valid config keys have changed in V2:"] + renamed + gone)
            warnings.warn(message, UserWarning)
            return message
        """
    sites = mine({"m.py": source})
    assert texts(sites, 7) == ["Valid config keys have changed in V2:{renamed + gone}"]
    pattern = compile_template(one(sites, 7).template)
    namespace: dict[str, object] = {}
    exec(textwrap.dedent(source), namespace)
    for renamings, removed in (({}, set()), ({"orm_mode": "from_attributes"}, {"fields"})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            message = namespace["prepare"](renamings, removed)  # type: ignore[operator]
        assert pattern.match(message) is not None, message


def test_colour_codes_in_a_message_are_not_part_of_its_template():
    # sglang's ``logger.warning(f"\\033[1;33m{message}\\033[0m")``: a terminal shows no
    # codes, and a paste has none (the parser reads them out of a log file's lines).
    sites = mine(
        {
            "m.py": """\
            import logging
            logger = logging.getLogger(__name__)

            def warn(message):
                logger.warning(f"\\033[1;33m{message}\\033[0m")

            def use(name):
                warn(f"The argument {name} is deprecated.")
                raise ValueError("\\x1b[31mred alert\\x1b[0m: stop")
            """
        }
    )
    assert texts(sites, 8) == ["The argument {name} is deprecated."]
    assert texts(sites, 9) == ["red alert: stop"]


def test_an_exception_given_to_a_helper_by_keyword_is_a_site():
    # omegaconf: ``self._format_and_raise(key=key, value=None, cause=ConfigAttributeError(msg))``
    sites = mine(
        {
            "m.py": """\
            class ConfigAttributeError(AttributeError):
                pass

            class DictConfig:
                def get(self, key):
                    msg = f"Key '{key}' is not in struct"
                    self._format_and_raise(key=key, value=None, cause=ConfigAttributeError(msg))
            """
        }
    )
    (site,) = sites
    assert (site.line, site.kind, site.error_class) == (7, SiteKind.OBJECT, "ConfigAttributeError")
    assert site.template.text == "Key '{key}' is not in struct"


def test_a_warning_helper_of_another_package_is_a_warning_site():
    # Lightning's ``rank_zero_warn(…, category=PossibleUserWarning)`` and
    # ``warning_cache.warn(m)`` come from lightning_utilities (through a module of its own for
    # the first); a helper the source defines is read as a helper, or not at all.
    sites = mine(
        {
            "pkg/data.py": """\
            from lightning_utilities.core.rank_zero import WarningCache
            from pkg.rank_zero import rank_zero_warn
            from pkg.warnings import PossibleUserWarning
            from pkg import _api
            warning_cache = WarningCache()

            def check(name, workers):
                if workers < 2:
                    rank_zero_warn(f"The '{name}' has few workers.", category=PossibleUserWarning)
                m = f"You called `self.log({name!r}, ...)` twice."
                warning_cache.warn(m)
                my_warn(f"own helper {name} text here")
                _api.warn_external(f"a helper of the source {name}")

            def my_warn(msg):
                print(msg)
            """,
            "pkg/warnings.py": "class PossibleUserWarning(UserWarning):\n    pass\n",
            "pkg/rank_zero.py": "from lightning_utilities.core.rank_zero import rank_zero_warn\n",
            "pkg/_api.py": "def warn_external(message):\n    print(message)\n",
        }
    )
    assert [(s.line, s.kind, s.error_class, s.template.text) for s in sites] == [
        (9, SiteKind.WARN, "PossibleUserWarning", "The '{name}' has few workers."),
        (11, SiteKind.WARN, "UserWarning", "You called `self.log({name}, ...)` twice."),
    ]


def test_a_deprecated_decorator_is_a_warning_site():
    # PEP 702: FastAPI's ``@deprecated("on_event is deprecated, …")`` warns when called.
    sites = mine(
        {
            "app.py": """\
            import warnings
            from typing_extensions import deprecated

            class App:
                @deprecated("on_event is deprecated, use lifespan event handlers instead.")
                def on_event(self, name):
                    return name

            @warnings.deprecated("Use g() instead", category=FutureWarning)
            def f():
                pass

            @deprecated("never shown", category=None)
            def h():
                pass

            def deprecated_here(reason):
                return lambda function: function

            @deprecated_here("not the PEP 702 decorator")
            def k():
                pass
            """
        }
    )
    assert [(s.line, s.kind, s.error_class, s.template.text) for s in sites] == [
        (
            5,
            SiteKind.WARN,
            "DeprecationWarning",
            "on_event is deprecated, use lifespan event handlers instead.",
        ),
        (9, SiteKind.WARN, "FutureWarning", "Use g() instead"),
    ]


def test_a_name_that_says_little_on_one_path_keeps_the_texts_of_the_others():
    # hydra: ``msg`` is ``f"Error parsing override '{override}'\\n{e}"`` on one path and
    # ``f"{e}"`` on another; a helper defined elsewhere makes its text of each.
    sites = mine(
        {
            "m.py": """\
            def _with_full_key(message, full_key):
                return f"{message}\\nfull_key: {full_key}" if full_key else message

            def parse(override, kind, e):
                if kind:
                    msg = f"Error parsing override '{override}'\\n{e}"
                else:
                    msg = f"{e}"
                raise ValueError(f"{msg}\\nSee the grammar for details")

            def call(target, partial, full_key, e):
                if partial:
                    msg = f"Error in creating partial({target}, ...) object:"
                else:
                    msg = f"Error in call to target '{target}':"
                raise RuntimeError(_with_full_key(msg, full_key))
            """
        }
    )
    assert sorted(texts(sites, 9)) == [
        "Error parsing override '{override}'\n{e}\nSee the grammar for details",
        "{msg}\nSee the grammar for details",
    ]
    assert sorted(texts(sites, 16)) == [
        "Error in call to target '{target}':",
        "Error in call to target '{target}':\nfull_key: {full_key}",
        "Error in creating partial({target}, ...) object:",
        "Error in creating partial({target}, ...) object:\nfull_key: {full_key}",
    ]


def test_a_factory_whose_class_comes_from_a_table_of_classes():
    # anthropic: ``error_class = ERROR_CLASSES.get(…) or … or (InternalServerError if … else
    # APIStatusError)``, ``return error_class(err_msg, …)``, reached through a method that
    # hands its caller's message on as it is.
    sites = mine(
        {
            "pkg/_errors.py": """\
            class APIStatusError(Exception):
                def __init__(self, message, *, response, body):
                    super().__init__(message)

            class BadRequestError(APIStatusError): pass
            class NotFoundError(APIStatusError): pass
            class InternalServerError(APIStatusError): pass

            ERROR_CLASSES: dict = {(400, None): BadRequestError, (404, None): NotFoundError}

            def make_status_error(err_msg, *, body, response):
                error_class = (
                    ERROR_CLASSES.get((response.status_code, body))
                    or (InternalServerError if response.status_code >= 500 else APIStatusError)
                )
                return error_class(err_msg, response=response, body=body)
            """,
            "pkg/client.py": """\
            from pkg._errors import make_status_error

            class Client:
                def _make_status_error_from_response(self, response):
                    err_msg = f"Error code: {response.status_code} - {response.text}"
                    return self._make_status_error(err_msg, body=None, response=response)

                def _make_status_error(self, err_msg, *, body, response):
                    return make_status_error(err_msg, body=body, response=response)

                def request(self, response):
                    raise self._make_status_error_from_response(response) from None
            """,
        }
    )
    raised = [(s.error_class, s.template.text) for s in sites if s.path == "pkg/client.py"]
    text = "Error code: {response.status_code} - {response.text}"
    assert sorted(raised) == [
        ("APIStatusError", text),
        ("BadRequestError", text),
        ("InternalServerError", text),
        ("NotFoundError", text),
    ]


def test_a_module_constant_set_again_in_branches_holds_each_text():
    # bitsandbytes' ``BNB_BACKEND = "CPU"``, then ``"ROCm"`` or ``"CUDA"`` by platform.
    sites = mine(
        {
            "m.py": """\
            import os
            BACKEND = "CPU"
            if os.environ.get("X"):
                BACKEND = "ROCm"
            elif os.environ.get("Y"):
                if os.environ.get("Z"):
                    BACKEND = "CUDA"

            def load(path):
                raise RuntimeError(f"No compatible {BACKEND} binary found at {path}")
            """
        }
    )
    assert texts(sites, 10) == [
        "No compatible CPU binary found at {path}",
        "No compatible CUDA binary found at {path}",
        "No compatible ROCm binary found at {path}",
    ]


def test_a_parameter_defaulting_to_warn_is_warn():
    # psycopg: ``def __del__(self, __warn: Any = warn)`` keeps ``warnings.warn`` for exit.
    sites = mine(
        {
            "c.py": """\
            from warnings import warn

            class Connection:
                def __del__(self, __warn=warn):
                    __warn(f"{self!r} was deleted while still open.", ResourceWarning)

                def close(self, __log=print):
                    __log(f"closing {self!r} now, as asked")
            """
        }
    )
    (site,) = sites
    assert (site.line, site.kind, site.error_class, site.template.text) == (
        5,
        SiteKind.WARN,
        "ResourceWarning",
        "{self} was deleted while still open.",
    )


def test_a_lazy_message_is_the_text_its_lambda_makes():
    # sympy: ``raise TypeError(LazyExceptionMessage(lambda: f"cannot determine truth value
    # of Relational: {self}"))``, shown through the message object's ``__str__``.
    sites = mine(
        {
            "rel.py": """\
            class LazyExceptionMessage:
                def __init__(self, callback):
                    self.callback = callback

                def __str__(self):
                    return self.callback()

            class Relational:
                def __bool__(self):
                    raise TypeError(
                        LazyExceptionMessage(lambda: f"cannot determine truth value of {self}")
                    )
            """
        }
    )
    (site,) = sites
    assert (site.error_class, site.template.text) == (
        "TypeError",
        "cannot determine truth value of {self}",
    )


def test_text_printed_to_standard_error_is_a_logged_error():
    # werkzeug's ``print(f"Port {port} is in use by another program. …", file=sys.stderr)``
    sites = mine(
        {
            "serving.py": """\
            import sys
            import click

            def run(port, e):
                print(e.strerror, file=sys.stderr)
                print(f"Port {port} is in use by another program.", file=sys.stderr)
                print(f"Serving on {port}")
                click.echo(f"Error: no such file {port}", err=True)
                click.echo("all good")
            """
        }
    )
    assert [(s.line, s.kind, s.error_class, s.template.text) for s in sites] == [
        (6, SiteKind.LOG, "ERROR", "Port {port} is in use by another program."),
        (8, SiteKind.LOG, "ERROR", "Error: no such file {port}"),
    ]


def test_dollar_fields_are_holes_where_the_source_fills_them_with_string_template():
    # omegaconf raises ``ValidationError("Value '$VALUE' of type '$VALUE_TYPE' could not be
    # converted to Integer")`` and fills the fields with ``string.Template`` elsewhere.
    nodes = """\
        class ValidationError(Exception):
            pass

        def convert(value):
            raise ValidationError("Value '$VALUE' of type '${VALUE_TYPE}' costs $$5")
        """
    formats = (
        "import string\n\n"
        "def fill(msg, **fields):\n"
        "    return string.Template(msg).safe_substitute(**fields)\n"
    )
    (site,) = mine({"omc/nodes.py": nodes, "omc/_utils.py": formats})
    assert site.template.text == "Value '{VALUE}' of type '{VALUE_TYPE}' costs {$}5"
    pattern = compile_template(site.template)
    raw = "Value '$VALUE' of type '${VALUE_TYPE}' costs $$5"
    for shown in (
        string.Template(raw).safe_substitute(VALUE="abc", VALUE_TYPE="str"),
        raw,
    ):
        assert pattern.match(shown) is not None, shown
    # A source that fills no such fields keeps the dollars as they are.
    (plain,) = mine({"omc/nodes.py": nodes})
    assert plain.template.text == "Value '$VALUE' of type '${VALUE_TYPE}' costs $$5"


def test_local_variables_follow_try_handlers_and_branches_that_end():
    sites = mine(
        {
            "m.py": """\
            def a(x):
                msg = "before call"
                try:
                    x()
                    msg = "after call"
                except Exception:
                    pass
                raise RuntimeError(msg)

            def b(kind, n):
                msg = "never raised"
                if kind == "a":
                    msg = f"kind a with {n}"
                else:
                    return None
                raise ValueError(msg)

            def c(x):
                msg = "start"
                try:
                    x()
                except KeyError:
                    msg = "key failed"
                except OSError:
                    msg = "never seen"
                    return None
                raise LookupError(msg)

            def d(items):
                msg = "nothing to check"
                for item in items:
                    if item.bad:
                        msg = f"bad item {item}"
                        break
                raise ValueError(msg)
            """
        }
    )
    # The call may fail before the assignment after it: the handler sees either value.
    assert texts(sites, 8) == ["after call", "before call"]
    # `break` leaves the loop with the branch's value: the code after the loop sees it.
    assert texts(sites, 35) == ["bad item {item}", "nothing to check"]
    # The else path returns: only the if path reaches the raise.
    assert texts(sites, 16) == ["kind a with {n}"]
    assert texts(sites, 27) == ["key failed", "start"]


def test_a_message_variable_of_an_enclosing_function():
    # networkx's ``not_implemented_for``: the decorator builds the message, the function it
    # returns raises it; a name of the inner function's own hides the outer one.
    sites = mine(
        {
            "decorators.py": """\
            def not_implemented_for(*graph_types):
                errmsg = f"not implemented for {' '.join(graph_types)} type"

                def _not_implemented_for(g, errmsg2=None):
                    if g:
                        raise NotImplementedError(errmsg)
                    def deeper(graph_types):
                        raise ValueError(errmsg)
                    return deeper

                def shadowed(errmsg):
                    raise TypeError(errmsg)

                def middle(errmsg):
                    def inner():
                        raise KeyError(errmsg)
                    return inner

                return _not_implemented_for
            """
        }
    )
    assert texts(sites, 6) == ["not implemented for {' '.join(graph_types)} type"]
    assert texts(sites, 8) == ["not implemented for {' '.join(graph_types)} type"]
    assert one(sites, 12).template.is_opaque
    assert one(sites, 16).template.is_opaque  # the middle function's parameter hides it


def test_message_argument_is_the_first_text_like_one_else_a_keyword():
    sites = mine(
        {
            "m.py": """\
            import errno

            def f(path, e, r):
                raise OSError(errno.ENOENT, f"no such file: {path}")
                raise HTTPException(status_code=404, detail="Item not found")
                raise MyError(code=3, message="went wrong")
                raise KeyError(path)
                raise PydanticCustomError("path_type", "Path is no {path_type}", {"path_type": r})
            """
        }
    )
    # pydantic-core's error type comes first; its context fills the template's fields.
    custom = one(sites, 8)
    assert (custom.template.text, custom.template.holes) == (
        "Path is no {path_type}",
        ["path_type"],
    )
    first = one(sites, 4)
    assert first.template.text == "no such file: {path}" and first.error_code == "ENOENT"
    http = one(sites, 5)
    assert (http.kind, http.http_status, http.template.text) == (
        SiteKind.HTTP,
        404,
        "Item not found",
    )
    assert one(sites, 6).template.text == "went wrong"
    opaque = one(sites, 7)
    assert (opaque.template.text, opaque.form, opaque.template.is_opaque) == (
        "{path}",
        "opaque",
        True,
    )


def test_pass_through_of_a_caught_exception_and_re_raises():
    sites = mine(
        {
            "m.py": """\
            def f(request):
                try:
                    pass
                except OSError as e:
                    raise ConnectionError(e, request=request)
                except ValueError as err:
                    raise RuntimeError(str(err)) from err
                except KeyError as exc:
                    raise InvalidURL(*exc.args)
                except TypeError as exc:
                    raise
                except Exception as exc:
                    raise exc
                raise RuntimeError(f"wrapped: {request}")
            """
        }
    )
    assert {s.line: s.form for s in sites} == {
        5: "passthrough",
        7: "passthrough",
        9: "passthrough",
        14: "f-string",
    }
    assert one(sites, 7).chained
    assert all(s.arguments for s in sites)


def test_raise_statement_shapes_and_argument_counts():
    sites = mine(
        {
            "m.py": """\
            def f(cls, e, tb, errors, key):
                raise ValueError
                raise ValueError()
                raise errors[key]("unknown key")
                raise type(e)("changed") from e
                raise ValueError("x").with_traceback(tb)
                raise e.with_traceback(tb)
            """
        }
    )
    assert [(s.line, s.arguments) for s in sites] == [
        (2, None),
        (3, 0),
        (4, 1),
        (5, 1),
        (6, 1),
        (7, 1),
    ]
    assert one(sites, 4).template.text == "unknown key"
    assert one(sites, 4).error_class == "errors[key]"
    assert one(sites, 5).error_class == "type(e)"
    assert one(sites, 6).error_class == "ValueError"


def test_a_constant_that_is_not_text_is_the_message_it_prints():
    sites = mine(
        {
            "m.py": """\
            def f(code):
                raise SystemExit(2)
                raise KeyError(0)
                raise SystemExit(code)
            """
        }
    )
    assert [(s.line, s.template.text, s.form, s.template.is_opaque) for s in sites] == [
        (2, "2", "constant", False),  # "SystemExit: 2", as IPython and pytest show argparse's exit
        (3, "0", "constant", False),
        (4, "{code}", "opaque", True),
    ]


def test_lines_of_the_message_and_of_the_enclosing_function():
    sites = mine(
        {
            "m.py": """\
            class A:
                def method(self, value):
                    if value:
                        raise ValueError(
                            "value must be "
                            f"positive, got {value}"
                        )
                    return value
            """
        }
    )
    site = one(sites, 4)
    assert (site.message_line, site.message_end_line, site.end_line) == (5, 6, 7)
    assert (site.function, site.function_start, site.function_end) == ("A.method", 2, 8)


def test_statements_are_every_statement_ast_walk_finds():
    # ``_statements`` stands in for ``ast.walk`` where only statements are asked for (#3).
    import ast
    import inspect
    import json as module

    from errdex.extract.python import _statements

    tree = ast.parse(inspect.getsource(module.decoder) + inspect.getsource(textwrap))
    match = "match x:\n    case 1:\n        raise E\n    case _:\n        y = 2\n"
    tree.body.append(ast.parse(match))
    found = {id(node) for node in _statements(tree) if isinstance(node, ast.stmt)}
    expected = {id(node) for node in ast.walk(tree) if isinstance(node, ast.stmt)}
    assert found == expected and len(found) > 300


@given(
    st.recursive(
        st.sampled_from(["a", "self", "x1", "None", "'s'", "f(x)", "d[0]", "(a + b)"]),
        lambda inner: st.builds("{}.{}".format, inner, st.sampled_from(["b", "config", "_c"])),
        max_leaves=6,
    )
)
def test_a_holes_text_is_what_ast_unparse_gives(expression: str) -> None:
    import ast

    from errdex.analyze.templates import source_text

    node = ast.parse(expression, mode="eval").body
    assert source_text(node) == ast.unparse(node)


@pytest.mark.parametrize(
    "target",
    [{"args": 0, "index": True}, {"args": 0, "index": 1}, {"name": "m.MSG"}, {"k": [1, "a"]}],
)
def test_a_references_style_is_its_targets_json_however_often_it_is_made(target) -> None:
    from errdex.analyze.templates import REFERENCE_STYLE, reference

    expected = REFERENCE_STYLE + json.dumps(target, separators=(",", ":"), sort_keys=True)
    for _ in range(2):  # made once, then looked up: True and 1 stay apart
        assert reference("x", dict(target)).parts[0].style == expected


@given(st.text(alphabet="a \n\r\x0c\u2028"))
def test_source_lines_are_split_where_pythons_tokenizer_counts_lines(text: str) -> None:
    # Universal newlines (LF, CRLF, CR), and nothing else: a form feed or U+2028 stays inside
    # its line, or every line number after it would be off by one.
    expected = [line.rstrip("\r\n") for line in io.StringIO(text, newline=None).readlines()]
    assert split_lines(text) == expected


# -- constants: module, class, imported -------------------------------------------------------

ERRORS = """\
from django.utils.translation import gettext_lazy as _

MSG = "Bad thing: {name}"
PERCENT = "value %s is wrong"
TEMPLATE = (
    "a long message "
    "on two lines"
)


class Messages:
    NOT_FOUND = "not found: %(key)s"
"""


def test_imported_constants_resolve_through_every_import_form():
    files = {
        "pkg/__init__.py": "from .errors import MSG as EXPORTED\n",
        "pkg/errors.py": ERRORS,
        "pkg/use.py": """\
        from .errors import MSG, Messages
        from pkg.errors import PERCENT
        import pkg.errors as m
        from . import errors
        from pkg import EXPORTED

        def f(name, x, key):
            raise ValueError(MSG.format(name=name))
            raise TypeError(PERCENT % x)
            raise KeyError(m.TEMPLATE)
            raise KeyError(errors.TEMPLATE.strip())
            raise LookupError(Messages.NOT_FOUND % {"key": key})
            raise ValueError(EXPORTED)
        """,
    }
    sites = mine(files)
    use = [s for s in sites if s.path == "pkg/use.py"]
    assert [(s.line, s.template.text, s.form) for s in use] == [
        (8, "Bad thing: {name}", "imported"),
        (9, "value {x} is wrong", "imported"),
        (10, "a long message on two lines", "imported"),
        (11, "a long message on two lines", "imported"),
        (12, "not found: {key}", "imported"),
        (13, "Bad thing: {name}", "imported"),
    ]
    assert one(use, 8).defined_at == Location(path="pkg/errors.py", line=3)
    assert one(use, 10).defined_at == Location(path="pkg/errors.py", line=5)
    assert one(use, 12).defined_at == Location(path="pkg/errors.py", line=12)
    # The site's own lines do not move to the definition.
    assert (one(use, 8).line, one(use, 8).message_line) == (8, 8)


def test_module_and_class_constants_of_the_same_file():
    sites = mine(
        {
            "m.py": """\
            REASON = "CSRF cookie not set."

            class Base:
                message = "base message"

            class View(Base):
                TOO_MANY = "too many: {n}"

                def check(self, n):
                    raise ValueError(REASON)
                    raise ValueError(self.TOO_MANY.format(n=n))
                    raise ValueError(View.TOO_MANY.format(n=1))
                    raise ValueError(self.message)
            """
        }
    )
    assert [(s.line, s.template.text, s.form) for s in sites] == [
        (10, "CSRF cookie not set.", "constant-ref"),
        (11, "too many: {n}", "constant-ref"),
        (12, "too many: {1}", "constant-ref"),
        (13, "base message", "constant-ref"),
    ]
    assert one(sites, 10).defined_at == Location(path="m.py", line=1)
    assert one(sites, 13).defined_at == Location(path="m.py", line=4)


def test_star_imports_and_a_source_root_above_the_package():
    sites = mine(
        {
            "python/pkg/consts.py": 'UNSUPPORTED = "unsupported layout: {}"\n',
            "python/pkg/__init__.py": "",
            "python/pkg/a.py": """\
            from pkg.consts import *

            def f(layout):
                raise ValueError(UNSUPPORTED.format(layout))
            """,
        }
    )
    site = one(sites, 4)
    assert site.template.text == "unsupported layout: {layout}"
    assert site.defined_at == Location(path="python/pkg/consts.py", line=1)


def test_unresolvable_references_stay_opaque():
    sites = mine(
        {
            "m.py": """\
            from elsewhere import MSG

            def f(self_):
                raise ValueError(MSG)
                raise ValueError(MSG.format(x=1))
            """
        }
    )
    assert [(s.template.text, s.form) for s in sites] == [
        ("{MSG}", "opaque"),
        ("{MSG.format(x=1)}", "opaque"),
    ]


# -- message tables -------------------------------------------------------------------------


def test_django_message_tables_through_base_classes_with_params():
    sites = mine(
        {
            "forms/fields.py": """\
            from django.utils.translation import gettext_lazy as _

            class Field:
                default_error_messages = {
                    "required": _("This field is required."),
                    "max_length": _("Ensure this value has at most %(limit_value)d characters."),
                }
            """,
            "forms/email.py": """\
            from django.core.exceptions import ValidationError
            from .fields import Field

            class EmailField(Field):
                default_error_messages = {"invalid": _("Enter a valid email address.")}

                def clean(self, value):
                    if not value:
                        raise ValidationError(self.error_messages["required"], code="required")
                    if len(value) > 5:
                        raise ValidationError(
                            self.error_messages["max_length"],
                            code="max_length",
                            params={"limit_value": self.max_length},
                        )
                    raise ValidationError(self.error_messages["invalid"], code="invalid")
            """,
        }
    )
    required = one(sites, 9, "forms/email.py")
    assert (required.template.text, required.form, required.error_code, required.i18n) == (
        "This field is required.",
        "table",
        "required",
        True,
    )
    assert required.defined_at == Location(path="forms/fields.py", line=4)
    limit = one(sites, 11, "forms/email.py")
    assert limit.template.text == "Ensure this value has at most {self.max_length} characters."
    assert limit.template.parts[1].style == "%(limit_value)d"
    own = one(sites, 16, "forms/email.py")
    assert (own.template.text, own.defined_at) == (
        "Enter a valid email address.",
        Location(path="forms/email.py", line=5),
    )


def test_module_level_message_tables():
    sites = mine(
        {
            "m.py": """\
            ERRORS = {"missing": "missing value", "extra": "extra value {0}"}

            def f(x):
                raise KeyError(ERRORS["missing"])
                raise KeyError(ERRORS["extra"].format(x))
            """
        }
    )
    assert texts(sites, 4) == ["missing value"]
    assert texts(sites, 5) == ["extra value {x}"]


# -- exception classes with their own text --------------------------------------------------

CLASSES = '''\
class AbstractMethodError(NotImplementedError):
    """Raised for abstract methods."""

    def __init__(self, class_instance, methodtype: str = "method") -> None:
        types = {"method", "classmethod", "staticmethod", "property"}
        if methodtype not in types:
            raise ValueError(f"methodtype must be one of {methodtype}, got {types} instead.")
        self.methodtype = methodtype
        self.class_instance = class_instance

    def __str__(self) -> str:
        if self.methodtype == "classmethod":
            name = self.class_instance.__name__
        else:
            name = type(self.class_instance).__name__
        return f"This {self.methodtype} must be defined in the concrete class {name}"


class PathError(OSError):
    def __init__(self, path):
        super().__init__(f"No such path: {path!r}")


class NotFound(Exception):
    default_detail = "Not found."


class Denied(Exception):
    def __init__(self, message="Permission denied.", code=None):
        super().__init__(message)


class TemplatesNotFound(Exception):
    def __init__(self, names=(), message=None):
        if message is None:
            message = f"none of the templates given were found: {names}"
        super().__init__(message)


class CheckMessage:
    def __init__(self, level, msg, hint=None, obj=None, id=None):
        self.msg = msg
        self.id = id

    def __str__(self):
        id = "(%s) " % self.id if self.id else ""
        return "%s%s" % (id, self.msg)


class Error(CheckMessage):
    def __init__(self, *args, **kwargs):
        super().__init__(40, *args, **kwargs)
'''


def test_exception_classes_that_build_their_own_text():
    sites = mine(
        {
            "pkg/errors.py": CLASSES,
            "pkg/use.py": """\
            from pkg.errors import (
                AbstractMethodError, Denied, NotFound, PathError, TemplatesNotFound, Error
            )

            def f(self, path, names):
                raise AbstractMethodError(self)
                raise AbstractMethodError(cls, methodtype="classmethod")
                raise PathError(path)
                raise PathError("/etc/passwd")
                raise NotFound
                raise NotFound()
                raise NotFound("custom")
                raise Denied()
                raise Denied("go away")
                raise TemplatesNotFound(names)
                raise TemplatesNotFound(message="empty list")
                raise Error("plain check message", id="E001")
            """,
        }
    )
    got = {s.line: (s.template.text, s.form) for s in sites if s.path == "pkg/use.py"}
    assert got == {
        6: ("This method must be defined in the concrete class {name}", "class-template"),
        7: ("This classmethod must be defined in the concrete class {name}", "class-template"),
        8: ("No such path: {path}", "class-template"),
        9: ("No such path: '/etc/passwd'", "class-template"),
        10: ("Not found.", "class-default"),
        11: ("Not found.", "class-default"),
        12: ("custom", "constant"),
        13: ("Permission denied.", "class-default"),
        14: ("go away", "constant"),
        15: ("none of the templates given were found: {names}", "class-template"),
        16: ("empty list", "class-template"),
        # Error(*args) sits between the call and CheckMessage: its text cannot be bound.
        17: ("plain check message", "constant"),
    }
    assert one(sites, 6, "pkg/use.py").defined_at == Location(path="pkg/errors.py", line=16)
    assert one(sites, 8, "pkg/use.py").defined_at == Location(path="pkg/errors.py", line=21)
    assert one(sites, 10, "pkg/use.py").defined_at == Location(path="pkg/errors.py", line=25)
    assert one(sites, 10, "pkg/use.py").arguments is None
    assert one(sites, 11, "pkg/use.py").arguments == 0


def test_an_init_that_sets_args_makes_the_text_as_super_init_does():
    # aiohttp's ServerDisconnectedError: ``self.args = (message,)`` instead of
    # ``super().__init__(message)``, with a text for when no message (or None) is given.
    sites = mine(
        {
            "m.py": """\
            class ServerDisconnectedError(ConnectionError):
                def __init__(self, message=None):
                    if message is None:
                        message = "Server disconnected"
                    self.args = (message,)
                    self.message = message

            class Pair(Exception):
                def __init__(self, a, b):
                    self.args = (a, b)  # str() shows the tuple: no one text

            def f(reason):
                raise ServerDisconnectedError()
                raise ServerDisconnectedError(f"closed: {reason}")
                raise Pair("x", "y")

            class Denied(Exception):
                def __init__(self, message="Permission denied"):
                    super().__init__(message)

            def lost(parser, detail=None):
                uncompleted = None
                if parser is not None:
                    uncompleted = parser.feed_eof()
                raise ServerDisconnectedError(uncompleted)
                raise ServerDisconnectedError(message=detail)
                raise ServerDisconnectedError(parser)
                raise Denied(uncompleted)
            """
        }
    )
    assert texts(sites, 13) == ["Server disconnected"]
    assert one(sites, 13).defined_at == Location(path="m.py", line=5)
    assert texts(sites, 14) == ["closed: {reason}"]
    assert texts(sites, 15) == ["x"]
    # A name that may be None (set to it, or defaulting to it): the class's text for None too.
    assert texts(sites, 25) == ["Server disconnected", "{uncompleted}"]
    assert texts(sites, 26) == ["Server disconnected", "{detail}"]
    assert texts(sites, 27) == ["{parser}"]
    # Passing None is not passing nothing: a parameter's default is not used then.
    assert texts(sites, 28) == ["{uncompleted}"]


def test_attributes_an_init_sets_together_make_the_text_of_str():
    # ``self.message, self.code = message, code``, then ``__str__`` builds on both.
    sites = mine(
        {
            "m.py": """\
            class UserError(Exception):
                def __init__(self, message, code):
                    self.message, self.code = message, code

                def __str__(self):
                    return f"{self.message} (code {self.code})"

            def f(name):
                raise UserError(f"bad name {name}", "E7")
            """
        }
    )
    assert texts(sites, 9) == ["bad name {name} (code E7)"]


def test_argparse_and_pytest_helpers_that_end_a_run_are_sites():
    # argparse's ``parser.error(msg)`` prints ``prog: error: msg`` and exits; pytest's
    # ``fail`` and ``exit`` raise ``Failed`` and ``Exit`` (plugins and conftest files).
    sites = mine(
        {
            "m.py": """\
            import argparse
            import pytest
            from pytest import fail

            def main(argv, reporter):
                parser = argparse.ArgumentParser(prog="tool")
                args = parser.parse_args(argv)
                if args.mode not in ("fast", "slow"):
                    parser.error(f"unknown mode {args.mode!r}; choose fast or slow")
                reporter.error("not a parser: a report")

            class Command:
                def run(self, value):
                    if value < 0:
                        pytest.fail(f"value must be positive, got {value}")
                    if value > 10:
                        fail(reason="values above ten are not allowed")
                    pytest.exit("stopping the session")
                    self.arg_parser.error("no input given")
            """
        }
    )
    assert (one(sites, 9).kind, one(sites, 9).error_class) == (SiteKind.EXIT, "SystemExit")
    assert texts(sites, 9) == ["unknown mode {args.mode}; choose fast or slow"]
    assert texts(sites, 10) == []
    assert (one(sites, 15).error_class, texts(sites, 15)) == (
        "Failed",
        ["value must be positive, got {value}"],
    )
    assert (one(sites, 17).error_class, texts(sites, 17)) == (
        "Failed",
        ["values above ten are not allowed"],
    )
    assert (one(sites, 18).error_class, texts(sites, 18)) == ("Exit", ["stopping the session"])
    assert texts(sites, 19) == ["no input given"]


def test_ansibles_display_logs_as_a_logger_does():
    # ``display.warning(msg)`` prints ``[WARNING]: msg``; plugins call ``self._display``.
    sites = mine(
        {
            "m.py": """\
            from ansible.utils.display import Display

            display = Display()

            class Inventory:
                def hosts(self, pattern, screen):
                    display.warning("provided hosts list is empty, only localhost is available")
                    self._display.error(f"no host matches {pattern}")
                    screen.warning("not a display: a screen")
            """
        }
    )
    warning, error = one(sites, 7), one(sites, 8)
    assert (warning.kind, warning.error_class) == (SiteKind.LOG, "WARNING")
    assert texts(sites, 7) == ["provided hosts list is empty, only localhost is available"]
    assert (error.error_class, texts(sites, 8)) == ("ERROR", ["no host matches {pattern}"])
    assert texts(sites, 9) == []


def test_a_message_handed_to_werkzeugs_local_proxy_is_a_site_of_its_raise():
    # werkzeug raises ``RuntimeError(unbound_message)`` when a proxy has nothing bound.
    sites = mine(
        {
            "m.py": """\
            from werkzeug import local
            from werkzeug.local import LocalProxy
            from other import Proxy

            _no_app_msg = "Working outside of application context."
            current_app = LocalProxy(_cv_app, "app", unbound_message=_no_app_msg)
            g = local.LocalProxy(_cv_app, "g", unbound_message=f"No {_cv_app.name} here.")
            request = LocalProxy(_cv_request, "request")
            other = Proxy(_cv_app, unbound_message="Working outside of the other context.")
            """
        }
    )
    site = one(sites, 6)
    assert (site.kind, site.error_class, site.form) == (
        SiteKind.RAISE,
        "RuntimeError",
        "handed",
    )
    assert texts(sites, 6) == ["Working outside of application context."]
    assert site.defined_at == Location(path="m.py", line=5)
    assert texts(sites, 7) == ["No {_cv_app.name} here."]
    assert texts(sites, 8) == texts(sites, 9) == []


def test_a_subclass_inherits_the_text_of_its_base_across_files():
    sites = mine(
        {
            "a.py": """\
            class BaseError(Exception):
                def __str__(self):
                    return "base failure"
            """,
            "b.py": """\
            from a import BaseError

            class Special(BaseError):
                pass

            def f():
                raise Special()
            """,
        }
    )
    assert one(sites, 7, "b.py").template.text == "base failure"


def test_a_base_text_reads_the_class_attributes_of_the_raised_subclass():
    # botocore: the base ``__init__`` formats ``self.fmt``, which each subclass sets (and DRF's
    # ``default_detail`` works alike): the raised class's own text is what users see.
    sites = mine(
        {
            "exceptions.py": """\
            class BotoCoreError(Exception):
                fmt = "An unspecified error occurred"

                def __init__(self, **kwargs):
                    msg = self.fmt.format(**kwargs)
                    Exception.__init__(self, msg)

            class NoRegionError(BotoCoreError):
                fmt = "You must specify a region."

            class UnknownServiceError(BotoCoreError):
                fmt = "Unknown service: '{service_name}'. Valid names are: {known}"

            class Quiet(BotoCoreError):
                pass
            """,
            "regions.py": """\
            from exceptions import NoRegionError, Quiet, UnknownServiceError

            def f(region):
                if region is None:
                    raise NoRegionError()
                if region == "x":
                    raise UnknownServiceError(service_name=region, known="a, b")
                raise Quiet()
            """,
        }
    )
    assert one(sites, 5, "regions.py").template.text == "You must specify a region."
    assert one(sites, 7, "regions.py").template.text == (
        "Unknown service: '{region}'. Valid names are: a, b"
    )
    assert one(sites, 8, "regions.py").template.text == "An unspecified error occurred"


def test_a_base_str_prints_the_description_a_subclass_sets():
    # werkzeug: ``NotFound`` sets ``description``; what it prints is ``HTTPException``'s
    # ``__str__``, which reads it, and a description the raise passes replaces it.
    sites = mine(
        {
            "exceptions.py": """\
            class HTTPException(Exception):
                code = None
                description = None

                def __init__(self, description=None, response=None):
                    super().__init__()
                    if description is not None:
                        self.description = description

                def __str__(self):
                    return f"{self.code} {self.name}: {self.description}"

            class NotFound(HTTPException):
                code = 404
                description = "The requested URL was not found on the server."

            def f(host):
                raise NotFound()

            def g(host):
                raise NotFound(f"Host {host!r} is not trusted.")

            class ServiceError(Exception):
                detail = "Internal error"

                def __str__(self):
                    return f"{self.status}: {self.detail}"

            class Forbidden(ServiceError):
                detail = "You are not allowed to do this"

            def h():
                raise Forbidden()
            """,
        }
    )
    # A class attribute a base's text shows is the raised class's own.
    assert texts(sites, 33) == ["{self.status}: You are not allowed to do this"]
    assert one(sites, 18).template.text == (
        "{self.code} {self.name}: The requested URL was not found on the server."
    )
    assert one(sites, 21).template.text == "{self.code} {self.name}: Host {host} is not trusted."


# -- factories, message functions, helpers, objects -----------------------------------------


def test_factories_give_the_message_where_the_exception_is_built():
    sites = mine(
        {
            "api.py": """\
            from fastapi import HTTPException

            def _invalid_type(value, expected):
                return JsonContractError(f"invalid type: {value!r}, expected {expected}")

            def _bad_request(msg):
                return HTTPException(status_code=400, detail=msg)

            class Parser:
                def _error(self, what):
                    msg = f"cannot parse {what}"
                    return ValueError(msg)

                def parse(self, v):
                    raise self._error("header")
            """,
            "use.py": """\
            from api import _invalid_type, _bad_request

            def check(v, expected):
                raise _invalid_type(v, expected=expected)
                raise _bad_request("size must be positive")
                raise unknown_factory(v)
            """,
        }
    )
    made = one(sites, 4, "use.py")
    assert (made.error_class, made.template.text, made.form, made.factory) == (
        "JsonContractError",
        "invalid type: {v}, expected {expected}",
        "factory",
        "_invalid_type",
    )
    assert (made.line, made.defined_at) == (4, Location(path="api.py", line=4))
    bad = one(sites, 5, "use.py")
    assert (bad.error_class, bad.template.text, bad.http_status, bad.kind) == (
        "HTTPException",
        "size must be positive",
        400,
        SiteKind.HTTP,
    )
    method = one(sites, 15, "api.py")
    assert (method.error_class, method.template.text, method.factory) == (
        "ValueError",
        "cannot parse header",
        "Parser._error",
    )
    unknown = one(sites, 6, "use.py")
    assert (unknown.template.text, unknown.form, unknown.arguments) == (
        "{unknown_factory(v)}",
        "opaque",
        1,
    )


def test_functions_that_return_a_message():
    sites = mine(
        {
            "m.py": """\
            def dt64_any_all_msg(how):
                return f"'{how}' with datetime64 dtypes is not supported."

            class Array:
                @staticmethod
                def _get_error_message(errno):
                    if errno == 0:
                        return "ERROR_SUCCESS"
                    return f"Windows error {errno}"

                def _validation_error_message(self, value):
                    return f"value should be a scalar. Got {value} instead."

                def f(self, v):
                    raise TypeError(dt64_any_all_msg("all"))
                    raise OSError(self._get_error_message(GetLastError()))
                    msg = self._validation_error_message(v)
                    raise TypeError(msg)
            """
        }
    )
    assert texts(sites, 15) == ["'all' with datetime64 dtypes is not supported."]
    assert texts(sites, 16) == ["ERROR_SUCCESS", "Windows error {GetLastError()}"]
    assert texts(sites, 18) == ["value should be a scalar. Got {v} instead."]
    assert {s.form for s in sites} == {"function"}
    assert one(sites, 18).defined_at == Location(path="m.py", line=12)


def test_message_helpers_give_one_record_per_caller_that_passes_text():
    sites = mine(
        {
            "base.py": """\
            from http import HTTPStatus

            class ServingBase:
                def create_error_response(
                    self, message, err_type="BadRequestError", status_code=HTTPStatus.BAD_REQUEST
                ):
                    error = ErrorResponse(object="error", message=message, code=status_code)
                    return error

            def fail(msg, param=None):
                raise UsageError(f"{param}: {msg}")
            """,
            "chat.py": """\
            from base import ServingBase, fail

            class Chat(ServingBase):
                async def handle(self, request, reason):
                    if request is None:
                        return self.create_error_response("Model not loaded")
                    if request.bad:
                        return self.create_error_response(
                            f"Invalid tokens type: {request.kind}", status_code=404
                        )
                    fail("no such option", param="--x")
                    fail(reason)
                    kind = "fixture" if reason else "argument"
                    fail(f"uses no {kind} named x", param="f")
            """,
        }
    )
    # One record per text the message may have.
    assert texts(sites, 14, "chat.py") == [
        "f: uses no argument named x",
        "f: uses no fixture named x",
    ]
    loaded = one(sites, 6, "chat.py")
    assert (loaded.kind, loaded.error_class, loaded.http_status, loaded.form) == (
        SiteKind.HTTP,
        "ErrorResponse",
        400,
        "helper",
    )
    assert loaded.template.text == "Model not loaded"
    assert loaded.factory == "ServingBase.create_error_response"
    assert loaded.defined_at == Location(path="base.py", line=7)
    invalid = one(sites, 8, "chat.py")
    assert (invalid.template.text, invalid.http_status) == (
        "Invalid tokens type: {request.kind}",
        404,
    )
    usage = one(sites, 11, "chat.py")
    assert (usage.kind, usage.error_class, usage.template.text) == (
        SiteKind.RAISE,
        "UsageError",
        "--x: no such option",
    )
    # A caller that passes a variable adds nothing; the helper's own site is marked.
    assert not [s for s in sites if s.path == "chat.py" and s.line == 12]
    assert one(sites, 11, "base.py").form == "f-string"
    assert one(sites, 7, "base.py").form == "helper"


def test_a_logging_helper_formats_its_callers_arguments_as_logging_does():
    # django's ``log_response(message, *args, response=None, …)`` logs with
    # ``getattr(logger, level)(message, *args)``: each caller's text is a log record, with
    # logging's ``%`` applied to the arguments after the message (#3).
    sites = mine(
        {
            "log.py": """\
            import logging
            request_logger = logging.getLogger("django.request")

            def log_response(message, *args, response=None, request=None, level=None):
                if level is None:
                    level = "error" if response.status_code >= 500 else "warning"
                escaped = tuple(str(a).encode("unicode_escape").decode() for a in args)
                getattr(request_logger, level)(message, *escaped, extra={"request": request})

            def log_fixed(message, *args):
                getattr(request_logger, "error")(message, *args)
            """,
            "csrf.py": """\
            from log import log_response, log_fixed

            def reject(request, reason, response):
                log_response(
                    "Forbidden (%s): %s", reason, request.path, response=response, request=request
                )
                log_response("Method Not Allowed (%s): %s", request.method, request.path)
                log_fixed("Gone: %s", request.path)
                log_response("no arguments: 100%% sure")
                log_response("%s: %s", response.reason_phrase, request.path)
                log_response("Unknown options: %s, %s", *request.options)
            """,
        }
    )
    forbidden = one(sites, 4, "csrf.py")
    assert (forbidden.kind, forbidden.error_class, forbidden.form) == (
        SiteKind.LOG,
        "WARNING",  # a level chosen at run time
        "helper",
    )
    assert forbidden.template.text == "Forbidden ({reason}): {request.path}"
    assert forbidden.defined_at == Location(path="log.py", line=8)
    assert one(sites, 7, "csrf.py").template.text == (
        "Method Not Allowed ({request.method}): {request.path}"
    )
    fixed = one(sites, 8, "csrf.py")
    assert (fixed.error_class, fixed.template.text) == ("ERROR", "Gone: {request.path}")
    # Without arguments, logging leaves the text as it is.
    assert one(sites, 9, "csrf.py").template.text == "no arguments: 100%% sure"
    # A caller's text of no words adds nothing to the helper's own record.
    assert not [s for s in sites if s.path == "csrf.py" and s.line in (10, 11)]
    assert one(sites, 8, "log.py").template.text == "{message}"


def test_a_parameters_helper_method_is_found_through_its_annotation():
    sites = mine(
        {
            "core.py": """\
            class Context:
                def fail(self, message):
                    raise UsageError(message, self)

            class Other:
                def fail(self, message):
                    raise BadParameter(message)
            """,
            "commands.py": """\
            import typing as t
            from core import Context

            def run(ctx: Context, quoted: "Context", maybe: t.Optional[Context], bare):
                ctx.fail("Missing command.")
                quoted.fail("No such command.")
                maybe.fail("Got unexpected extra argument.")
                bare.fail("Nothing tells which fail this is.")

            def union(ctx: Context | None, many: Context | int):
                ctx.fail("Union with None.")
                many.fail("Not one class.")
            """,
        }
    )
    for line, text in [
        (5, "Missing command."),
        (6, "No such command."),
        (7, "Got unexpected extra argument."),
        (11, "Union with None."),
    ]:
        site = one(sites, line, "commands.py")
        assert (site.error_class, site.template.text, site.factory, site.form) == (
            "UsageError",
            text,
            "Context.fail",
            "helper",
        )
    # Two classes have a helper ``fail``: without one class named, no record is guessed.
    assert not [s for s in sites if s.path == "commands.py" and s.line in (8, 12)]


def test_a_property_message_and_the_exception_class_an_init_default_names():
    sites = mine(
        {
            "runtime.py": """\
            import functools
            from errors import UndefinedError, errors

            class Undefined:
                def __init__(self, hint=None, name=None, exc=UndefinedError):
                    self._hint = hint
                    self._name = name
                    self._exc = exc

                @property
                def _message(self):
                    if self._hint:
                        return self._hint
                    return f"{self._name!r} is undefined"

                def fail(self):
                    raise self._exc(self._message)

                def not_a_property(self):
                    return "never shown"

                def other(self):
                    raise ValueError(self.not_a_property)

            class Field:
                error_class = errors.ValidationError

                @functools.cached_property
                def detail(self):
                    return "This field is required."

                def check(self):
                    raise self.error_class(self.detail)
            """
        }
    )
    assert [(s.error_class, s.template.text, s.form) for s in sites if s.line == 17] == [
        ("UndefinedError", "{self._hint}", "function"),
        ("UndefinedError", "{self._name} is undefined", "function"),
    ]
    # A method that is not a property is not its text: ``self.not_a_property`` is a method.
    assert one(sites, 23).template.is_opaque
    field = one(sites, 33)
    # A class attribute is not taken for the class: subclasses set their own.
    assert (field.error_class, field.template.text) == (
        "error_class",
        "This field is required.",
    )


def test_a_parameter_stands_for_the_class_or_module_its_default_names():
    # aiohttp: ``raise client_error(req.connection_key, exc)`` with
    # ``client_error=ClientConnectorError``, and ``__del__(self, _warnings=warnings)``.
    sites = mine(
        {
            "client.py": """\
            import warnings

            class ClientConnectorError(OSError):
                def __init__(self, key, os_error):
                    self._key = key
                    super().__init__(os_error.errno, os_error.strerror)

                def __str__(self):
                    return f"Cannot connect to host {self._key} [{self.strerror}]"

            def connect(key, client_error=ClientConnectorError, other=None):
                try:
                    pass
                except OSError as exc:
                    raise client_error(key, exc) from exc
                raise other(key)

            def fail(msg, error_class=ValueError, strict=False):
                if strict:
                    error_class = StrictError
                raise error_class(msg)

            class Session:
                def __del__(self, _warnings=warnings):
                    _warnings.warn(f"Unclosed client session {self!r}", ResourceWarning)
            """
        }
    )
    raised = one(sites, 15)
    assert (raised.error_class, raised.template.text) == (
        "ClientConnectorError",
        "Cannot connect to host {key} [{self.strerror}]",
    )
    assert one(sites, 16).error_class == "other"  # no default: bound at run time
    assert one(sites, 21).error_class == "error_class"  # set again: not only the default
    warned = one(sites, 25)
    assert (warned.kind, warned.error_class, warned.template.text) == (
        SiteKind.WARN,
        "ResourceWarning",
        "Unclosed client session {self}",
    )


def test_a_local_name_bound_to_classes_raises_each_of_them():
    # docker's ``cls = APIError`` … ``cls = NotFound`` … ``raise cls(e, …)``: a site of each
    # class, with the text the class shows.
    sites = mine(
        {
            "errors.py": """\
            class APIError(Exception):
                def __init__(self, message, response=None):
                    super().__init__(message)
                    self.response = response

                def __str__(self):
                    return f"{self.response.status_code} Client Error: {self.response.reason}"

            class NotFound(APIError):
                pass

            def from_http(e, response):
                cls = APIError
                if response.status_code == 404:
                    cls = NotFound
                raise cls(e, response=response)

            def rebound(e, kind):
                cls = APIError
                cls = kind.pick()
                raise cls(e)
            """
        }
    )
    at_raise = [site for site in sites if site.line == 16]
    assert [(site.error_class, site.template.text) for site in at_raise] == [
        ("APIError", "{self.response.status_code} Client Error: {self.response.reason}"),
        ("NotFound", "{self.response.status_code} Client Error: {self.response.reason}"),
    ]
    assert one(sites, 21).error_class == "cls"  # bound to what a call returns: run time


def test_a_format_argument_that_is_a_local_name_shows_each_text_it_holds():
    # stripe's ``__str__``: ``msg = self._message or "<empty message>"``, then
    # ``"Request {0}: {1}".format(self.request_id, msg)`` or ``msg``; the raise's own text
    # goes in both.
    sites = mine(
        {
            "error.py": """\
            class StripeError(Exception):
                def __init__(self, message=None, headers=None):
                    self._message = message
                    self.request_id = (headers or {}).get("request-id")

                def __str__(self):
                    msg = self._message or "<empty message>"
                    if self.request_id is not None:
                        return "Request {0}: {1}".format(self.request_id, msg)
                    return msg

            class AuthenticationError(StripeError):
                pass

            def require(key):
                if key is None:
                    raise AuthenticationError("No API key provided.")

            def kinds(kind):
                noun = "card" if kind else "bank account"
                raise ValueError("Invalid {0} number: {1}".format(noun, kind))
            """
        }
    )
    assert texts(sites, 17) == [
        "No API key provided.",
        "Request {self.request_id}: No API key provided.",
    ]
    assert texts(sites, 21) == [
        "Invalid bank account number: {kind}",
        "Invalid card number: {kind}",
    ]


def test_a_str_that_formats_the_message_with_the_other_arguments():
    # dateutil's ParserError: ``self.args[0] % self.args[1:]``, with a fallback.
    sites = mine(
        {
            "parser.py": """\
            class ParserError(ValueError):
                def __str__(self):
                    try:
                        return self.args[0] % self.args[1:]
                    except (TypeError, IndexError):
                        return super(ParserError, self).__str__()

            def parse(timestr):
                raise ParserError("Unknown string format: %s", timestr)
                raise ParserError("No date in it")
                raise ParserError("%s is not in %s", timestr, "the calendar")
            """
        }
    )
    assert texts(sites, 9) == ["Unknown string format: {timestr}"]
    assert texts(sites, 10) == ["No date in it"]
    assert texts(sites, 11) == ["{timestr} is not in the calendar"]  # a text stays text


def test_the_text_a_cli_shows_through_format_message_is_a_record_too():
    # click prints ``Error: {e.format_message()}``; a traceback shows ``str(e)``.
    sites = mine(
        {
            "exceptions.py": """\
            class ClickException(Exception):
                def __init__(self, message):
                    super().__init__(message)
                    self.message = message

                def format_message(self):
                    return self.message

            class BadParameter(ClickException):
                def __init__(self, message, param_hint=None):
                    super().__init__(message)
                    self.param_hint = param_hint

                def format_message(self):
                    if self.param_hint is None:
                        return _("Invalid value: {message}").format(message=self.message)
                    return f"Invalid value for {self.param_hint}: {self.message}"

            def convert(value):
                raise BadParameter(f"{value!r} is not a valid integer.")
                raise ClickException("plain")
            """
        }
    )
    assert texts(sites, 20) == [
        "Invalid value for {self.param_hint}: {value} is not a valid integer.",
        "Invalid value: {value} is not a valid integer.",
        "{value} is not a valid integer.",
    ]
    assert texts(sites, 21) == ["plain"]  # its format_message shows just the message


def test_a_string_literal_formatted_by_a_plain_percent_directive_is_text():
    sites = mine(
        {
            "m.py": """\
            import logging

            logger = logging.getLogger(__name__)
            CONNECTION_ERROR = "consumer: Cannot connect to %s: %s.\\n%s"

            def f(uri, exc):
                logger.error(CONNECTION_ERROR, uri, exc, "Trying to reconnect...")
                raise ValueError("Invalid %s: %r (%5s)" % ("name", "x", "pad"))
                raise ValueError("Unknown %(what)s %(v)s" % {"what": "option", "v": exc})
            """
        }
    )
    assert texts(sites, 7) == ["consumer: Cannot connect to {uri}: {exc}.\nTrying to reconnect..."]
    # ``%r`` shows the repr; a width (or a flag, or another type) keeps the hole.
    assert texts(sites, 8) == ["Invalid name: 'x' ({'pad'})"]
    assert texts(sites, 9) == ["Unknown option {exc}"]


def test_a_message_formatted_twice_has_the_text_of_each_format_argument():
    # sklearn's UndefinedMetricWarning: "{{0}}" survives the first ``.format`` as "{0}", which
    # the second fills with text, or with the template of another ``.format``.
    sites = mine(
        {
            "m.py": """\
            import warnings

            def warn_prf(modifier, msg_start, result_size):
                axis0, axis1 = "sample", "label"
                msg = (
                    "{0} ill-defined and being set to 0.0 {{0}} "
                    "no {1} {2}s.".format(msg_start, modifier, axis0)
                )
                if result_size == 1:
                    msg = msg.format("due to")
                else:
                    msg = msg.format("in {0}s with".format(axis1))
                warnings.warn(msg, UserWarning)
                raise ValueError("{!r} is {:>6}".format("x", "long"))
            """
        }
    )
    assert texts(sites, 13) == [
        "{msg_start} ill-defined and being set to 0.0 due to no {modifier} {axis0}s.",
        "{msg_start} ill-defined and being set to 0.0 in {axis1}s with no {modifier} {axis0}s.",
    ]
    assert texts(sites, 14) == ["'x' is   long"]


def test_a_local_name_whose_texts_have_holes_of_their_own_stands_in_an_f_string():
    sites = mine(
        {
            "m.py": """\
            def check(kind, name, hint):
                if kind == "argument":
                    missing = "Missing argument"
                else:
                    missing = "Missing {}".format(kind)
                hint = f" {hint}" if hint else ""
                raise ValueError(f"{missing}{hint}: {name}")
            """
        }
    )
    # ``hint`` is " {hint}" or "": too little text to stand in for the hole, which takes both.
    assert texts(sites, 7) == ["Missing argument{hint}: {name}", "Missing {kind}{hint}: {name}"]


def test_a_raise_without_a_message_has_the_texts_its_class_shows_without_one():
    # click's ``MissingParameter(param=p)`` prints "Missing argument 'SRC'."; pytest's
    # ``FixtureLookupError(argname, request)`` prints "fixture 'x' not found" through the
    # repr object ``formatrepr`` returns.
    sites = mine(
        {
            "exc.py": """\
            class UsageError(Exception):
                def __init__(self, message, ctx=None):
                    super().__init__(message)
                    self.message = message

                def format_message(self):
                    return self.message

            class MissingParameter(UsageError):
                def __init__(self, message=None, param=None, param_type=None):
                    super().__init__(message or "")
                    self.param = param
                    self.param_type = param_type

                def format_message(self):
                    hint = f" {self.param.name!r}" if self.param else ""
                    msg = f" {self.message}" if self.message else ""
                    if self.param_type == "option":
                        missing = "Missing option"
                    else:
                        missing = "Missing argument"
                    return f"{missing}{hint}.{msg}"

                def __str__(self):
                    return self.message or "Missing parameter"

            class FixtureLookupError(LookupError):
                def __init__(self, argname, request, msg=None):
                    self.argname = argname
                    self.msg = msg

                def formatrepr(self):
                    msg = self.msg
                    if msg is None:
                        msg = f"fixture {self.argname!r} not found"
                        msg += "\\n use 'pytest --fixtures' for help"
                    return LookupErrorRepr(self.argname, msg)

            def process(param, value):
                if value is None:
                    raise MissingParameter(param=param)
                raise MissingParameter("Give a number", param=param)

            def lookup(request, argname, known):
                if argname not in known:
                    raise FixtureLookupError(argname, request)
                raise FixtureLookupError(None, request, f"{argname} failed")
            """
        }
    )
    assert texts(sites, 41) == [
        "Missing argument{hint}.",
        "Missing option{hint}.",
        "Missing parameter",
    ]
    # A message of its own is in every text the class shows.
    given = texts(sites, 42)
    assert "Give a number" in given and len(given) == 3
    assert all("Give a number" in text for text in given)
    assert texts(sites, 46) == [
        "fixture {self.argname} not found\n use 'pytest --fixtures' for help",
        "{argname}",
    ]
    assert texts(sites, 47) == ["{argname} failed"]


def test_an_attribute_that_is_a_stripped_parameter_shows_the_message_stripped():
    # pydantic's deprecation warnings: ``self.message = message.rstrip(".")``, then
    # ``f"{self.message}. Deprecated in …"`` in ``__str__``.
    sites = mine(
        {
            "m.py": """\
            import warnings

            class Deprecated(DeprecationWarning):
                def __init__(self, message, *args):
                    super().__init__(message, *args)
                    self.message = message.rstrip(".")

                def __str__(self):
                    return f"{self.message}. Deprecated in V2, to be removed in V3."

            def old():
                warnings.warn("The `dict` method is deprecated.", Deprecated)
                raise Deprecated("Use `model_dump`...")
            """
        }
    )
    assert texts(sites, 12) == [
        "The `dict` method is deprecated. Deprecated in V2, to be removed in V3."
    ]
    assert texts(sites, 13) == ["Use `model_dump`. Deprecated in V2, to be removed in V3."]


def test_a_class_text_that_decorates_the_message_the_raise_gives():
    sites = mine(
        {
            "exc.py": """\
            class HasCode:
                code = None

                def _code_str(self):
                    return f"(Background on this error at: https://sqlalche.me/e/{self.code})"

                def __str__(self):
                    message = super().__str__()
                    if self.code:
                        message = "%s %s" % (message, self._code_str())
                    return message

            class SQLError(HasCode, Exception):
                def _message(self):
                    if len(self.args) == 1:
                        text = str(self.args[0])
                        return text
                    return str(self.args)

                def __str__(self):
                    return self._message() + "."

            class NoResultFound(HasCode, Exception):
                code = "xyz"

            class Empty(SQLError):
                pass
            """,
            "use.py": """\
            from exc import NoResultFound, Empty

            def f(name, a, b):
                raise NoResultFound("No row was found for %r" % name)
                raise NoResultFound()
                raise NoResultFound(a, b)
                raise Empty(f"nothing in {name}")
            """,
        }
    )
    assert texts(sites, 4, "use.py") == [
        "No row was found for {name}",
        "No row was found for {name} {self._code_str()}",
    ]
    # No argument: ``super().__str__()`` is empty. Two: what they print is not known here.
    assert texts(sites, 5, "use.py") == ["", " {self._code_str()}"]
    assert texts(sites, 6, "use.py") == ["{self.args[0]}", "{self.args[0]} {self._code_str()}"]
    assert texts(sites, 7, "use.py") == ["nothing in {name}."]


def test_what_a_str_decorates_is_what_the_init_and_the_bases_str_made_of_it():
    sites = mine(
        {
            "errs.py": """\
            class PrefixError(Exception):
                def __init__(self, msg, code=0):
                    super().__init__(f"E{code}: {msg}")

                def __str__(self):
                    return super().__str__() + " (see docs)"

            class Base(Exception):
                def __str__(self):
                    return f"[base] {self.args[0]}"

            class Child(Base):
                def __str__(self):
                    return super().__str__() + " (child)"

            class First(Exception):
                def __str__(self):
                    return "E: %s" % self.args[0]

            class HttpFailure(First):
                def __init__(self, status, message):
                    super().__init__(message)

            class Reasoned(Exception):
                def __str__(self):
                    return self.reason

            class CopyFailed(Reasoned):
                def __str__(self):
                    return "copy failed: " + super().__str__()

            def f(name):
                raise PrefixError(f"no {name}", code=7)
                raise Child("disk full")
                raise First("first", "second")
                raise HttpFailure(503, "upstream unavailable")
                raise CopyFailed("/srv/data")
            """
        }
    )
    assert texts(sites, 33) == ["E7: no {name} (see docs)"]
    assert texts(sites, 34) == ["[base] disk full (child)"]
    assert texts(sites, 35) == ["E: first"]  # self.args[0]: the first of any number
    # An __init__ that hands some of its parameters up as they are: what the raise gives
    # them reaches ``args`` (vLLM's ``super().__init__(message)`` after keyword-only ones).
    assert texts(sites, 36) == ["E: upstream unavailable"]
    # A base __str__ of unknown text: a hole.
    assert texts(sites, 37) == ["copy failed: {self.args[0]}"]


def test_a_str_that_decorates_the_message_a_forwarding_init_hands_up():
    # vLLM's ``VLLMValidationError``: ``__init__(self, message, *, parameter=None, value=None)``
    # hands ``message`` up; ``__str__`` shows ``base = super().__str__()`` with extras after.
    sites = mine(
        {
            "exceptions.py": """\
            class ValidationError(Exception):
                def __init__(self, message, *, parameter=None):
                    super().__init__(message)
                    self.parameter = parameter

                def __str__(self):
                    base = super().__str__()
                    return f"{base} (parameter={self.parameter})" if self.parameter else base

            def check(n, limit):
                if n > limit:
                    raise ValidationError(
                        f"The maximum context length is {limit} tokens.", parameter="input"
                    )
            """
        }
    )
    assert texts(sites, 12) == [
        "The maximum context length is {limit} tokens.",
        "The maximum context length is {limit} tokens. (parameter=input)",
    ]


def test_a_factory_that_looks_its_message_up_by_the_key_its_caller_passes():
    # marshmallow: ``raise self.make_error("invalid")``; ``make_error`` reads
    # ``self.error_messages[key]``, the caller's class's table first.
    sites = mine(
        {
            "fields.py": """\
            class ValidationError(Exception):
                pass

            class Field:
                default_error_messages = {"required": "Missing data for required field."}

                def make_error(self, key, **kwargs):
                    msg = self.error_messages[key]
                    if isinstance(msg, str):
                        msg = msg.format(**kwargs)
                    return ValidationError(msg)

                def deserialize(self, value):
                    if value is None:
                        raise self.make_error("required")

            class Integer(Field):
                default_error_messages = {
                    "invalid": "Not a valid integer.",
                    "too_large": "Number too large, at most {max}.",
                }

                def _validated(self, value):
                    if not value:
                        raise self.make_error("invalid")
                    raise self.make_error("too_large", max=10)
            """
        }
    )
    assert texts(sites, 15) == ["Missing data for required field."]
    assert texts(sites, 25) == ["Not a valid integer."]
    assert texts(sites, 26) == ["Number too large, at most 10.", "Number too large, at most {max}."]
    assert one(sites, 25).form == "factory" and one(sites, 25).error_class == "ValidationError"


def test_a_helper_that_hands_the_message_to_another_helper():
    # SQLAlchemy: ``util.warn(msg)`` → ``_warnings_warn(msg, SAWarning)`` → ``warnings.warn``.
    sites = mine(
        {
            "pkg/util/langhelpers.py": """\
            import warnings

            class SAWarning(RuntimeWarning):
                pass

            def _warnings_warn(message, category=None, stacklevel=2):
                if category is None:
                    category = SAWarning
                warnings.warn(message, category, stacklevel=stacklevel + 1)

            def warn(msg, code=None):
                _warnings_warn(msg, SAWarning)

            def warn_deprecated(msg, category=DeprecationWarning):
                warnings.warn(msg, category, stacklevel=2)

            def warn_twice_removed(msg):
                warn(msg)

            def warn_shouted(msg):
                msg = msg.upper()
                warn(msg)
            """,
            "pkg/util/__init__.py": (
                "from .langhelpers import warn, warn_shouted, warn_twice_removed\n"
                "from .langhelpers import _warnings_warn, warn_deprecated\n"
            ),
            "pkg/compiler.py": """\
            from . import util

            def check(froms):
                util.warn("SELECT statement has a cartesian product between %s" % froms)
                util.warn_twice_removed("Two helpers deep: %s" % froms)
                util.warn(froms)
                util.warn_shouted("not what is shown")
                util.warn_deprecated("The foo argument is deprecated")
                util.warn_deprecated("The bar argument", PendingDeprecationWarning)
                util._warnings_warn("Plain default")
            """,
        }
    )
    # A helper's category: the one its caller passes, else its default (or its own for None).
    assert [(s.line, s.error_class) for s in sites if s.path == "pkg/compiler.py"][-3:] == [
        (8, "DeprecationWarning"),
        (9, "PendingDeprecationWarning"),
        (10, "SAWarning"),
    ]
    # A helper that changes the message before handing it on is not followed.
    assert not [s for s in sites if s.path == "pkg/compiler.py" and s.line == 7]
    first = one(sites, 4, "pkg/compiler.py")
    assert (first.kind, first.error_class, first.form, first.template.text) == (
        SiteKind.WARN,
        "SAWarning",
        "helper",
        "SELECT statement has a cartesian product between {froms}",
    )
    assert first.defined_at == Location(path="pkg/util/langhelpers.py", line=9)
    assert one(sites, 5, "pkg/compiler.py").template.text == "Two helpers deep: {froms}"
    assert not [s for s in sites if s.path == "pkg/compiler.py" and s.line == 6]


def test_an_exception_built_into_a_variable_is_raised_where_the_raise_is():
    # marshmallow's Schema.load: ``exc = ValidationError(errors, …)`` … ``raise exc``.
    sites = mine(
        {
            "m.py": """\
            def load(self, data, errors):
                if errors:
                    exc = ValidationError("Invalid input: %s" % errors, data=data)
                    self.handle_error(exc, data)
                    raise exc
                warning = DeprecationWarning("Never raised, only returned")
                exc = ValueError("rebuilt")
                exc = compute()
                raise exc

            def pick(candidates):
                exc = LookupError("no candidate matched")
                for exc in candidates:
                    raise exc
                error = KeyError("missing")
                try:
                    pass
                except OSError as error:
                    raise error

            def run(cmd, code):
                error = CommandFailed(command=cmd, code=code)
                raise error

            def walrus(x):
                err = ValueError("default problem here")
                if (err := check(x)) is not None:
                    raise err

            def basic(param):
                invalid = HTTPException(401, detail="Invalid authentication credentials")
                try:
                    data = decode(param)
                except ValueError:
                    raise invalid
                if not data:
                    raise invalid
                bare = Unauthorized()
                if param:
                    raise bare
                raise bare

            class MyError(Exception):
                def __init__(self, name):
                    super().__init__(f"bad name {name}")

            def twice(x):
                exc = MyError(x)
                if x:
                    raise exc
                raise exc
            """
        }
    )
    # Raised twice: a site at each raise, none where it is built; the class's text at each.
    assert texts(sites, 50) == texts(sites, 51) == ["bad name {x}"]
    assert [(s.line, s.error_class, s.template.text) for s in sites if 30 <= s.line <= 41] == [
        (35, "HTTPException", "Invalid authentication credentials"),
        (37, "HTTPException", "Invalid authentication credentials"),
        (40, "Unauthorized", ""),
        (41, "Unauthorized", ""),
    ]
    assert one(sites, 23).error_class == "CommandFailed"  # built with no text: raised here
    # Rebound by a walrus, a loop, a handler or an assignment: those raises raise something
    # else, an object made elsewhere (a site of its own), or a caught exception (none).
    passed_on = [(s.line, s.error_class, s.form) for s in sites if s.line in (9, 14, 19, 28)]
    assert passed_on == [
        (9, "exc", "passthrough"),
        (14, "exc", "passthrough"),
        (28, "err", "passthrough"),
    ]
    assert one(sites, 26).kind is SiteKind.OBJECT
    assert {s.kind for s in sites if s.line in (12, 15)} == {SiteKind.OBJECT}
    raised = one(sites, 5)
    assert (raised.kind, raised.error_class, raised.template.text) == (
        SiteKind.RAISE,
        "ValidationError",
        "Invalid input: {errors}",
    )
    assert raised.message_line == 3 and raised.source_code_start <= 5 <= raised.source_code_end
    assert not [s for s in sites if s.line == 3]
    assert one(sites, 6).kind is SiteKind.OBJECT  # built, never raised: an object
    assert one(sites, 7).kind is SiteKind.OBJECT  # ``exc`` rebound before the raise


def test_the_text_of_a_class_no_site_names_is_a_record_of_its_own():
    # botocore: ``raise error_class(parsed_response, operation_name)``, a class made at run
    # time from ClientError, whose ``__init__`` builds the text every AWS error shows.
    sites = mine(
        {
            "exceptions.py": """\
            class ClientError(Exception):
                MSG_TEMPLATE = (
                    "An error occurred ({error_code}) when calling the {operation_name} operation"
                )

                def __init__(self, response, operation_name):
                    msg = self.MSG_TEMPLATE.format(
                        error_code=response["Code"], operation_name=operation_name
                    )
                    super().__init__(msg)

            class RaisedError(Exception):
                def __init__(self, path):
                    super().__init__(f"No such path: {path}")

            class Tiny(Exception):
                def __init__(self, x):
                    super().__init__(f"bad {x}")

            class AliasedError(Exception):
                def __init__(self, quota):
                    super().__init__(f"over the quota of {quota} requests")

            class BaseFailure(Exception):
                def __init__(self, what):
                    super().__init__(f"could not do {what} at all")

            class SubFailure(BaseFailure):
                pass

            class LintWarning:
                def __str__(self):
                    return f"{self.path}: style warning of some kind"

            class EventStreamError(ClientError):
                pass
            """,
            "client.py": """\
            from exceptions import AliasedError as QE

            def call(self, error_class, response, path):
                raise error_class(response, "GetObject")
                raise RaisedError(path)
                raise QE(10)
                raise SubFailure("it")
                raise EventStreamError(response, "GetObject")  # ClientError's text is its own
            """,
        }
    )
    text = one(sites, 10, "exceptions.py")
    assert (text.kind, text.error_class, text.form, text.function) == (
        SiteKind.OBJECT,
        "ClientError",
        "class-template",
        "ClientError.__init__",
    )
    assert text.template.text == (
        "An error occurred ({response['Code']}) when calling the {operation_name} operation"
    )
    assert text.source_code_start <= 10 <= text.source_code_end and "super()" in text.source_code
    # A class a site raises by name (or by an alias, or through a subclass) has its text
    # there; one with almost no text, or that is no exception, has none. A base whose
    # ``__init__`` takes what the class bound at run time is given may be that class: it keeps
    # its record though a subclass is raised by name.
    assert [s.error_class for s in sites if s.path == "exceptions.py"] == ["ClientError"]


def test_a_raise_of_a_function_that_makes_the_class_it_is_given_raises_that_class():
    # huggingface_hub: ``raise _format(GatedRepoError, message, response)``, where ``_format``
    # ends with ``err = error_type(final_error_message, …); return err``.
    sites = mine(
        {
            "http.py": """\
            class GatedRepoError(Exception):
                pass

            def _format(error_type, custom_message, response):
                final_error_message = custom_message
                err = error_type(final_error_message.strip(), response=response)
                return err

            def _made(kind, text):
                return kind(text)

            def raise_for_status(response, e):
                message = f"Cannot access gated repo for url {response.url}."
                raise _format(GatedRepoError, message, response) from e
                raise _made(e.kind, "no class known")
            """
        }
    )
    assert (one(sites, 14).error_class, one(sites, 14).template.text) == (
        "GatedRepoError",
        "Cannot access gated repo for url {response.url}.",
    )
    assert one(sites, 15).error_class == "_made"  # a class bound at run time stays unknown


def test_a_local_name_bound_to_a_logger_method_logs_at_its_level():
    # gunicorn: ``log_func = self.log.info if exit_status == 0 else self.log.error``.
    sites = mine(
        {
            "arbiter.py": """\
            class Arbiter:
                def reap(self, worker, reason, exit_status):
                    log_func = self.log.info if exit_status == 0 else self.log.error
                    log_func("Worker (pid:%s) exited with code %s", worker, exit_status)
                    log_func = print
                    log_func("Reason: %s", reason)
            """
        }
    )
    logged = one(sites, 4)
    assert (logged.kind, logged.error_class, logged.template.text) == (
        SiteKind.LOG,
        "ERROR",
        "Worker (pid:{worker}) exited with code {exit_status}",
    )
    assert texts(sites, 6) == []  # rebound to something else


def test_a_class_text_a_function_builds_keeps_its_decorated_form():
    # pymongo: ``super().__init__(_format_detailed_error(error, details))``, a function that
    # returns ``f"{message}, full error: {details}"`` or the bare message.
    sites = mine(
        {
            "errors.py": """\
            def _format_detailed_error(message, details):
                if details is not None:
                    message = f"{message}, full error: {details}"
                return message

            class PyMongoError(Exception):
                def __init__(self, message="", error_labels=None):
                    super().__init__(message)

            class OperationFailure(PyMongoError):
                def __init__(self, error, code=None, details=None):
                    super().__init__(_format_detailed_error(error, details))

            def check(errmsg, code, response):
                raise OperationFailure(errmsg, code, response)
            """
        }
    )
    assert texts(sites, 15) == ["{errmsg}", "{errmsg}, full error: {response}"]


def test_a_factory_defined_in_the_function_that_raises_it_makes_its_exception():
    # matplotlib's scatter: ``def invalid_shape_exception(csize, xsize): return
    # ValueError(f"'c' argument has {csize} elements…")``, then ``raise
    # invalid_shape_exception(c.size, xsize) from err`` in the same function.
    sites = mine(
        {
            "axes.py": """\
            class Axes:
                @staticmethod
                def parse_color(c, xsize):
                    def invalid_shape_exception(csize, xsize):
                        return ValueError(f"'c' argument has {csize} elements, not {xsize}.")
                    try:
                        c = float(c)
                    except ValueError as err:
                        raise invalid_shape_exception(c.size, xsize) from err
            """
        }
    )
    site = one(sites, 9)
    assert (site.error_class, site.form, site.template.text) == (
        "ValueError",
        "factory",
        "'c' argument has {c.size} elements, not {xsize}.",
    )


def test_a_factory_that_delegates_to_a_subclass_method_makes_its_exceptions():
    # The openai SDK: the base client's factory builds the message and hands it to
    # ``_make_status_error``, which only the (generic base's) subclass implements.
    sites = mine(
        {
            "base.py": """\
            from typing import Generic, TypeVar

            T = TypeVar("T")

            class BaseClient(Generic[T]):
                def _make_status_error_from_response(self, response):
                    if response.is_closed:
                        err_msg = f"Error code: {response.status_code}"
                    else:
                        body = response.text
                        err_msg = f"Error code: {response.status_code} - {body}"
                    return self._make_status_error(err_msg, body=None, response=response)

                def _make_status_error(self, err_msg, *, body, response):
                    raise NotImplementedError()

            class SyncAPIClient(BaseClient[int]):
                def request(self, err):
                    raise self._make_status_error_from_response(err.response) from None
            """,
            "client.py": """\
            from base import SyncAPIClient

            class RateLimitError(Exception):
                pass

            class APIStatusError(Exception):
                pass

            class OpenAI(SyncAPIClient):
                def _make_status_error(self, err_msg, *, body, response):
                    if response.status_code == 429:
                        return RateLimitError(err_msg)
                    return APIStatusError(err_msg)
            """,
        }
    )
    made = sorted((s.error_class, s.template.text) for s in sites if s.line == 19)
    assert made == [
        ("APIStatusError", "Error code: {response.status_code}"),
        ("APIStatusError", "Error code: {response.status_code} - {body}"),
        ("RateLimitError", "Error code: {response.status_code}"),
        ("RateLimitError", "Error code: {response.status_code} - {body}"),
    ]
    assert {s.form for s in sites if s.line == 19} == {"factory"}


def test_a_warn_imported_from_the_source_is_its_helper_not_warnings_warn():
    sites = mine(
        {
            "pkg/util.py": """\
            import warnings

            class FrobWarning(UserWarning):
                pass

            def warn(msg):
                warnings.warn(msg, FrobWarning)
            """,
            "pkg/a.py": """\
            from .util import warn

            def frob():
                warn("the frobnicator is deprecated")
            """,
            "pkg/b.py": """\
            from warnings import warn

            def frob():
                warn("the real warnings.warn")
            """,
        }
    )
    helped = one(sites, 4, "pkg/a.py")
    assert (helped.error_class, helped.form) == ("FrobWarning", "helper")
    assert one(sites, 4, "pkg/b.py").error_class == "UserWarning"


def test_an_fstring_shows_the_constant_texts_a_local_name_holds():
    # jsonschema: ``message = "is too short" if … else "should be non-empty"``, then
    # ``f"{instance!r} {message}"``: one template per text, not ``{instance} {message}``.
    sites = mine(
        {
            "m.py": """\
            def min_length(instance, size):
                if size == 1:
                    message = "should be non-empty"
                else:
                    message = "is too short"
                raise ValueError(f"{instance!r} {message}")

            def shown_as_repr(instance, flag):
                message = "a" if flag else "b"
                raise ValueError(f"{instance} {message!r}")
            """
        }
    )
    assert texts(sites, 6) == ["{instance} is too short", "{instance} should be non-empty"]
    assert texts(sites, 10) == ["{instance} {message}"]  # !r changes the text: a hole


def test_each_text_of_a_message_binds_the_class_text_apart():
    sites = mine(
        {
            "m.py": """\
            class ValidationError(Exception):
                def __init__(self, message, validator=None):
                    super().__init__(message)
                    self.message = message

                def __str__(self):
                    return self.message

            def max_length(instance, limit):
                message = "is expected to be empty" if limit == 0 else "is too long"
                yield ValidationError(f"{instance!r} {message}")
            """
        }
    )
    assert texts(sites, 11) == ["{instance} is expected to be empty", "{instance} is too long"]


def test_an_attribute_the_init_sets_twice_has_no_one_value():
    # PyYAML's Reader: ``self.name = "<unicode string>"`` or ``"<byte string>"``.
    sites = mine(
        {
            "m.py": """\
            class ReaderError(Exception):
                def __init__(self, name, kind, position):
                    self.name = name
                    self.kind = kind
                    self.position = position

                def __str__(self):
                    return "bad %s character in %s at %d" % (self.kind, self.name, self.position)

            class Reader:
                def __init__(self, stream):
                    self.kind = "reader"
                    if isinstance(stream, str):
                        self.name = "<unicode string>"
                    else:
                        self.name = "<byte string>"

                def fail(self, position):
                    raise ReaderError(self.name, self.kind, position)
            """
        }
    )
    assert texts(sites, 19) == ["bad reader character in {self.name} at {position}"]


def test_an_attribute_set_from_a_parameter_or_a_default_text_keeps_the_default():
    # django's constraints: ``violation_error_message`` or the class's default.
    sites = mine(
        {
            "m.py": """\
            class Constraint:
                default_message = "Constraint %(name)s is violated."

                def __init__(self, name, message=None):
                    self.name = name
                    if message is not None:
                        self.message = message
                    else:
                        self.message = self.default_message

                def check(self):
                    raise ValueError(self.message % {"name": self.name})
            """
        }
    )
    assert texts(sites, 12) == ["Constraint {self.name} is violated."]


def test_a_factory_that_returns_the_exception_it_built_into_a_name():
    sites = mine(
        {
            "m.py": """\
            class InvalidMetadata(ValueError):
                pass

            def invalid(field, cause=None):
                exc = InvalidMetadata(f"{field!r} is a required field")
                exc.__cause__ = cause
                return exc

            def check(raw):
                raise invalid("version")
            """
        }
    )
    site = one(sites, 10)
    assert (site.error_class, site.form, site.template.text) == (
        "InvalidMetadata",
        "factory",
        "'version' is a required field",
    )


def test_a_text_an_init_chain_builds_through_its_bases():
    # urllib3: MaxRetryError → RequestError → PoolError, each ``__init__`` giving the next.
    sites = mine(
        {
            "exceptions.py": """\
            class PoolError(Exception):
                def __init__(self, pool, message):
                    self.pool = pool
                    super().__init__(f"{pool}: {message}")

            class RequestError(PoolError):
                def __init__(self, pool, url, message):
                    self.url = url
                    super().__init__(pool, message)

            class MaxRetryError(RequestError):
                def __init__(self, pool, url, reason=None):
                    self.reason = reason
                    message = f"Max retries exceeded with url: {url} (Caused by {reason!r})"
                    super().__init__(pool, url, message)

            def retry(pool, url, error):
                raise MaxRetryError(pool, url, error)
            """
        }
    )
    assert texts(sites, 18) == ["{pool}: Max retries exceeded with url: {url} (Caused by {error})"]


def test_error_objects_built_without_raise_carry_their_code():
    sites = mine(
        {
            "checks.py": """\
            from django.core import checks

            class Field:
                def _check_field_name(self):
                    if self.name.endswith("_"):
                        return [
                            checks.Error(
                                "Field names must not end with an underscore.",
                                obj=self,
                                id="fields.E001",
                            )
                        ]
                    errors = []
                    errors.append(checks.Warning("Deprecated option.", hint="x", id="fields.W1"))
                    errors.append(ValidationError(f"bad {self.name}", code="bad"))
                    return errors

                def not_errors(self):
                    node = Node(name="x", id="n1")
                    return Path("a")
            """
        }
    )
    assert [(s.line, s.kind, s.error_class, s.error_code, s.template.text) for s in sites] == [
        (
            6,
            SiteKind.OBJECT,
            "Error",
            "fields.E001",
            "Field names must not end with an underscore.",
        ),
        (14, SiteKind.OBJECT, "Warning", "fields.W1", "Deprecated option."),
        (15, SiteKind.OBJECT, "ValidationError", "bad", "bad {self.name}"),
    ]
    assert one(sites, 14).severity.value == "warning"
    assert all(s.arguments is None for s in sites)


# -- the link step and its inputs -----------------------------------------------------------


def test_exports_are_json_and_link_gives_the_same_sites_from_a_cache():
    files = {
        "pkg/errors.py": CLASSES + ERRORS,
        "pkg/use.py": """\
        from pkg.errors import MSG, AbstractMethodError

        def f(name):
            raise ValueError(MSG.format(name=name))
            raise AbstractMethodError(name)
        """,
    }
    results = extract(files)
    exports = results[0].exports
    assert exports["module"] == "pkg.errors"
    assert set(exports["classes"]) >= {"AbstractMethodError", "PathError", "Messages"}
    assert exports["classes"]["AbstractMethodError"]["text"]["how"] == "str"
    assert exports["classes"]["AbstractMethodError"]["init"]["attributes"] == {
        "methodtype": "methodtype",
        "class_instance": "class_instance",
    }
    assert results[1].exports["imports"]["MSG"] == "pkg.errors.MSG"
    json.dumps([r.exports for r in results])
    cached = [FileResult.model_validate_json(r.model_dump_json()) for r in results]
    extractor = PythonExtractor()
    assert extractor.link(cached) == extractor.link(results)


def test_module_names_from_paths():
    assert module_name("pkg/sub/__init__.py") == "pkg.sub"
    assert module_name("pkg/sub/mod.py") == "pkg.sub.mod"
    assert module_name("setup.py") == "setup"


def test_relative_imports_from_a_package_init():
    sites = mine(
        {
            "pkg/sub/__init__.py": """\
            from .msgs import TEXT
            from ..top import OTHER

            def f():
                raise ValueError(TEXT)
                raise ValueError(OTHER)
            """,
            "pkg/sub/msgs.py": 'TEXT = "from the sub package"\n',
            "pkg/top.py": 'OTHER = "from the top package"\n',
        }
    )
    assert texts(sites, 5) == ["from the sub package"]
    assert texts(sites, 6) == ["from the top package"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("raise ValueError(msg or 'default text')", ["default text", "{msg}"]),
        ("raise ValueError('a' if x else 'b')", ["a", "b"]),
        ("raise ValueError(textwrap.dedent('''\n    two\n      lines'''))", ["\ntwo\n  lines"]),
    ],
)
def test_conditional_and_wrapped_messages(source, expected):
    sites = mine({"m.py": f"def f(msg, x):\n    {source}\n"})
    assert sorted(s.template.text for s in sites) == expected


def test_mining_reports_forms_and_opaque_counts(tmp_path):
    from errdex.extract.files import open_source
    from errdex.pipeline import Pipeline
    from errdex.settings import Settings
    from errdex.store.base import SearchQuery
    from errdex.store.sqlite import SQLiteStore

    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "errors.py").write_text(ERRORS)
    (root / "pkg" / "use.py").write_text(
        "from .errors import MSG\n"
        "def f(x, e):\n"
        "    raise ValueError(MSG)\n"
        "    raise ValueError(x)\n"
        "    try:\n"
        "        pass\n"
        "    except OSError as e:\n"
        "        raise RuntimeError(e)\n"
    )
    db = tmp_path / "s.sqlite3"
    with SQLiteStore(db) as store:
        report = Pipeline(Settings(db=db), store).mine(open_source(str(root)))
        (record,) = [r for r in store.search(SearchQuery(repo="proj"))[0] if r.line_number == 3]
    assert report.forms == {"imported": 1, "opaque": 1, "passthrough": 1}
    assert report.opaque == 2
    full = record.full_dict()
    assert (full["messageForm"], full["definedAt"], full["arguments"]) == (
        "imported",
        {"path": "pkg/errors.py", "line": 3},
        1,
    )
    assert full["i18n"] is False and full["factory"] is None


def test_table_keys_chosen_by_a_condition_and_tables_completed_by_subclasses():
    sites = mine(
        {
            "fields.py": """\
            class BooleanField:
                default_error_messages = {
                    "invalid": "“%(value)s” value must be either True or False.",
                    "invalid_nullable": "“%(value)s” value must be either True, False, or None.",
                }

                def to_python(self, value):
                    raise ValidationError(
                        self.error_messages["invalid_nullable" if self.null else "invalid"],
                        params={"value": value},
                    )

            class BaseTemporalField:
                def to_python(self, value):
                    raise ValidationError(self.error_messages["invalid"], code="invalid")

            class DateField(BaseTemporalField):
                default_error_messages = {"invalid": "Enter a valid date."}

            class TimeField(BaseTemporalField):
                default_error_messages = {"invalid": "Enter a valid time."}
            """
        }
    )
    assert texts(sites, 8) == [
        "“{value}” value must be either True or False.",
        "“{value}” value must be either True, False, or None.",
    ]
    assert texts(sites, 15) == ["Enter a valid date.", "Enter a valid time."]
    assert sorted(s.defined_at.line for s in sites if s.line == 15) == [18, 21]


def test_an_alias_renames_only_the_class_its_own_file_raises():
    sites = mine(
        {
            "pkg/errors.py": """\
            class Error(Exception):
                pass

            def fail(msg):
                raise Error(msg)

            def make_error(x):
                return Error(f"factory message for {x}")
            """,
            "pkg/views.py": """\
            from pkg.errors import Error as PkgError, fail, make_error
            from other.exceptions import ValidationError as Error

            def check(x):
                if x < 0:
                    fail(f"value {x} must not be negative")
                raise make_error(x)

            def direct(x):
                raise PkgError(f"direct {x}")
            """,
        }
    )
    views = {s.line: s for s in sites if s.path == "pkg/views.py"}
    # The helper's and the factory's class is named in their module, whatever views.py imports.
    assert (views[6].form, views[6].error_class) == ("helper", "Error")
    assert (views[7].form, views[7].error_class) == ("factory", "Error")
    assert views[7].facts is not None and "Exception" in views[7].facts.exception_bases
    # PkgError is pkg.errors.Error, its bases found under the name the file resolves.
    assert views[10].error_class == "Error"
    assert views[10].facts is not None and "Exception" in views[10].facts.exception_bases


def test_a_warning_made_once_at_module_level_warns_with_its_class_and_text():
    # pytest's ``YIELD_FIXTURE = PytestDeprecationWarning("…")`` in ``deprecated.py``, then
    # ``warnings.warn(YIELD_FIXTURE)`` in another module (and in its own).
    sites = mine(
        {
            "pkg/deprecated.py": """\
            from warnings import warn
            from pkg.warning_types import PytestDeprecationWarning

            YIELD_FIXTURE = PytestDeprecationWarning("@pytest.yield_fixture is deprecated.")
            PRIVATE = PytestDeprecationWarning("A private pytest class was used.")
            NOT_A_WARNING = dict(a="b")

            def check():
                warn(PRIVATE, stacklevel=3)
            """,
            "pkg/fixtures.py": """\
            import warnings
            from pkg.deprecated import YIELD_FIXTURE

            def yield_fixture():
                warnings.warn(YIELD_FIXTURE, stacklevel=2)
            """,
        }
    )
    assert [(s.path, s.line, s.error_class, s.template.text) for s in sites] == [
        ("pkg/deprecated.py", 9, "PytestDeprecationWarning", "A private pytest class was used."),
        (
            "pkg/fixtures.py",
            5,
            "PytestDeprecationWarning",
            "@pytest.yield_fixture is deprecated.",
        ),
    ]


def test_a_warning_category_that_builds_its_text_shows_the_message_in_it():
    sites = mine(
        {
            "w.py": """\
            import warnings

            class RemovedIn9Warning(DeprecationWarning):
                def __str__(self):
                    return f"{self.args[0]} (removed in 9.0)"

            class Derived(DeprecationWarning):
                def __init__(self, message):
                    self.message = message.rstrip(".")

                def __str__(self):
                    return f"{self.message}. Deprecated in V2."

            class Shouted(DeprecationWarning):
                def __init__(self, message):
                    self.message = message.upper()

                def __str__(self):
                    return f"{self.message}!"

            def f(x):
                warnings.warn(f"the {x} option is deprecated", RemovedIn9Warning)
                warnings.warn("The dict method is deprecated.", category=Derived)
                warnings.warn("The dict method is deprecated.", category=Shouted)
            """
        }
    )
    assert texts(sites, 22) == ["the {x} option is deprecated (removed in 9.0)"]
    # The message stripped, as the attribute holds it (pydantic's deprecation warnings).
    assert texts(sites, 23) == ["The dict method is deprecated. Deprecated in V2."]
    # A text that does not show the message warned (an attribute made of it) is not used.
    assert texts(sites, 24) == ["The dict method is deprecated."]


def test_warnings_and_log_calls_given_their_message_by_keyword_are_sites():
    sites = mine(
        {
            "m.py": """\
            import logging
            import warnings

            logger = logging.getLogger(__name__)

            def f(x):
                warnings.warn(message=f"kw {x} is deprecated", category=FutureWarning)
                logger.error(msg="cannot reach %s", args=None)
            """
        }
    )
    warned = one(sites, 7)
    assert (warned.template.text, warned.error_class) == ("kw {x} is deprecated", "FutureWarning")
    logged = one(sites, 8)
    assert logged.template.text == "cannot reach %s" and logged.error_class == "ERROR"


def test_module_level_aliases_of_logger_methods_are_log_sites():
    code = (
        "logger = get_logger(__name__)\n"
        "info, warn, error = (logger.info, logger.warning, logger.error)\n"
        'UNKNOWN = "Received unregistered task of type %s."\n'
        "def f(x):\n"
        "    error(UNKNOWN, x, exc_info=True)\n"
        '    warn("careful %s", x)\n'
        '    info("fine")\n'
        '    print("not a logger %s", x)\n'
    )
    from errdex.extract.files import SourceFile
    from errdex.extract.python import PythonExtractor

    sites = PythonExtractor().extract(SourceFile("m.py", code.encode())).sites
    assert [(s.line, s.error_class, s.template.text) for s in sites] == [
        (5, "ERROR", "Received unregistered task of type {x}."),
        (6, "WARNING", "careful {x}"),
    ]


def test_a_function_of_thousands_of_branches_is_mined_in_near_linear_time():
    # Each branch assigns a message and raises it: merging every variable after every `if`,
    # and reading every earlier sibling `if` at every site, made this quadratic (5.6 s).
    import time

    count = 3000
    source = "def f(a):\n" + "".join(
        f"    m{i} = 'bad {i}'\n    if a == {i}:\n        raise ValueError(m{i})\n"
        for i in range(count)
    )
    extractor = PythonExtractor()
    started = time.process_time()
    sites = extractor.link([extractor.extract(SourceFile("big.py", source.encode()))])
    assert time.process_time() - started < 3.0
    assert [site.template.text for site in sites] == [f"bad {i}" for i in range(count)]


@pytest.mark.parametrize("count", [16, 60])
def test_a_name_reassigned_from_itself_many_times_stays_small(count):
    # diffusers' ``clean_text``: sixty ``text = re.sub(…, text)`` in a row. Each call's
    # reference held the one before it as escaped JSON, which grew by half at each level:
    # 32 of them took 78 s and 24 GB.
    source = (
        "import re\n\ndef clean(text):\n    text = str(text)\n"
        + "".join(f"    text = re.sub(r'p{i}', '', text)\n" for i in range(count))
        + "    return text\n\ndef check(text):\n    raise ValueError(clean(text))\n"
    )
    extractor = PythonExtractor()
    result = extractor.extract(SourceFile("chain.py", source.encode()))
    assert len(result.model_dump_json()) < 100_000
    (site,) = extractor.link([result])
    assert site.line == 4 + count + 4


def test_extraction_and_link_leave_no_reference_cycles():
    # The pipeline pauses the cyclic collector while it mines (#3): what extract and link
    # drop must be freed by reference counting alone (the extractor and its template builder,
    # the linker while it walks class bases), or every result would live until the end.
    import gc

    files = {
        "pkg/errors.py": """
            class BaseError(Exception):
                pass

            class NotFound(BaseError):
                message = "not found"
        """,
        "pkg/api.py": """
            from pkg.errors import NotFound

            MSG = "bad value {}"

            def check(value):
                if value is None:
                    raise NotFound()
                raise ValueError(MSG.format(value))
        """,
    }
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        sites = mine(files)
        assert {site.error_class for site in sites} == {"NotFound", "ValueError"}
        del sites
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


@pytest.mark.skipif(
    sys.version_info >= (3, 13),
    reason="Python 3.13 dropped the old grammar's async-as-a-name (python/cpython#107015)",
)
def test_code_older_than_python_3_7_that_names_things_async_is_still_mined():
    # celery 4.1 imports ``kombu.async``: this Python's grammar refuses the file, the 3.6
    # grammar (``async`` still a name) reads it.
    sites = mine(
        {
            "pkg/worker.py": """\
            from kombu.async import Hub

            def start(async=False):
                if async:
                    raise ValueError("cannot start in async mode: %s" % Hub)
            """
        }
    )
    site = one(sites, 5)
    assert site.template.text == "cannot start in async mode: {Hub}"


def test_a_file_no_grammar_reads_is_a_syntax_error_of_this_python():
    from errdex.errors import ExtractionError

    with pytest.raises(ExtractionError) as caught:
        extract({"pkg/old.py": 'print "hello"\nasync = 1\n'})
    assert caught.value.kind == "syntax-error" and caught.value.line == 1
    assert "Missing parentheses" in str(caught.value)


def test_cls_in_a_classmethod_is_the_class():
    # ``raise cls(…)`` / ``return cls(…)`` in a classmethod: the class (or a subclass that
    # inherits its text), also where ``cls`` is set to one found at run time.
    sites = mine(
        {
            "m.py": """\
            class InvalidValueError(ValueError):
                @classmethod
                def check(cls, value):
                    if value < 0:
                        raise cls(f"negative: {value}")

                @classmethod
                def instance(cls, orig):
                    for base in type(orig).__mro__:
                        if base.__name__ in globals():
                            cls = globals()[base.__name__]
                    return cls(f"wrapped: {orig}")

                def not_a_classmethod(cls, value):
                    raise cls(value)

            def f(orig):
                raise InvalidValueError.instance(orig)
            """
        }
    )
    assert (one(sites, 5).error_class, one(sites, 5).template.text) == (
        "InvalidValueError",
        "negative: {value}",
    )
    assert (one(sites, 18).error_class, one(sites, 18).template.text) == (
        "InvalidValueError",
        "wrapped: {orig}",
    )
    assert one(sites, 15).error_class == "cls"


def test_a_name_a_try_body_sets_to_an_unknown_value_keeps_that_value_after_it():
    # gunicorn: the signal's name, or ``code N`` when the number names no signal.
    sites = mine(
        {
            "m.py": """\
            import signal

            def reap(log, wpid, sig):
                try:
                    sig_name = signal.Signals(sig).name
                except ValueError:
                    sig_name = "code {}".format(sig)
                log.error("Worker (pid:{}) was sent {}!".format(wpid, sig_name))
                try:
                    reason = "known"
                except ValueError:
                    pass
                raise RuntimeError(f"stopped: {reason}")
            """
        }
    )
    assert texts(sites, 8) == [
        "Worker (pid:{wpid}) was sent code {sig}!",
        "Worker (pid:{wpid}) was sent {sig_name}!",
    ]
    # A handler that falls through without it: the name is unbound there, not unknown.
    assert texts(sites, 13) == ["stopped: known"]


def test_a_private_class_no_site_raises_is_a_record_unless_public_classes_derive_from_it():
    # numpy's C code raises ``_UFuncNoLoopError`` and its private subclass; jsonschema's
    # ``_Error`` is the base of the public ``ValidationError``, whose text it is.
    sites = mine(
        {
            "np/_exceptions.py": """\
            class UFuncTypeError(TypeError):
                pass

            class _UFuncNoLoopError(UFuncTypeError):
                def __init__(self, ufunc, dtypes):
                    self.dtypes = tuple(dtypes)

                def __str__(self):
                    return "ufunc {!r} did not contain a loop".format(self.ufunc.__name__)

            class _UFuncBinaryResolutionError(_UFuncNoLoopError):
                def __str__(self):
                    return "ufunc {!r} cannot use operands".format(self.ufunc.__name__)
            """,
            "js/exceptions.py": """\
            class _Error(Exception):
                def __init__(self, message):
                    self.message = message

                def __str__(self):
                    return f"Failed validating: {self.message} in the schema"

            class ValidationError(_Error):
                pass
            """,
        }
    )
    objects = {(s.error_class, s.template.text) for s in sites if s.kind is SiteKind.OBJECT}
    assert ("_UFuncNoLoopError", "ufunc {self.ufunc.__name__} did not contain a loop") in objects
    assert (
        "_UFuncBinaryResolutionError",
        "ufunc {self.ufunc.__name__} cannot use operands",
    ) in objects
    assert not any(name == "_Error" for name, _ in objects)


def test_the_hierarchy_holds_the_exception_classes_with_their_ancestors():
    results = extract(
        {
            "pkg/base.py": """\
            class Problem(Exception):
                pass

            class Model:
                pass
            """,
            "pkg/errors.py": """\
            from pkg.base import Problem, Model

            class Oops(Problem):  # an exception by its base alone
                pass

            class Bert(Model):
                pass

            class Wrapped(requests.HTTPError):
                pass
            """,
        }
    )
    found = {
        name: (module, ancestors)
        for name, module, ancestors in PythonExtractor().hierarchy(results)
    }
    assert found == {
        "Problem": ("pkg.base", ["Exception", "BaseException"]),
        "Oops": ("pkg.errors", ["Problem", "Exception", "BaseException"]),
        "Wrapped": ("pkg.errors", ["requests.HTTPError"]),
    }


def test_raising_a_module_level_exception_instance_raises_its_class_and_text():
    # twisted's mailmail: ``_unsupportedOption = SystemExit("Unsupported option.")`` at the
    # module's top, then ``raise _unsupportedOption`` in its functions.
    sites = mine(
        {
            "m.py": """\
            _unsupportedOption = SystemExit("Unsupported option.")
            _sentinel = object()

            def parse(argv):
                if "-x" in argv:
                    raise _unsupportedOption
                raise _sentinel

            def shadowed(_unsupportedOption):
                raise _unsupportedOption
            """
        }
    )
    raised = one(sites, 6)
    assert (raised.error_class, raised.template.text, raised.message_line) == (
        "SystemExit",
        "Unsupported option.",
        1,
    )
    assert one(sites, 7).error_class == "_sentinel"
    assert one(sites, 10).error_class == "_unsupportedOption"
