"""Frozen values that are cheap to make: dataclasses whose constructor mypyc compiles.

A hot path that makes many small values (explain makes a parsed paste, its errors and the
answer on every call; the classifier makes its tests, evidence and answer for every site a
mining run finds) pays for a dataclass's ``__init__``: it is generated at import, so mypyc
cannot compile it (0.8 µs a value, and a frozen one sets each field through
``object.__setattr__``). These values are dataclasses (``fields``, ``asdict``, ``replace``,
``==`` and ``hash`` work) with an ``__init__`` of their own, which mypyc compiles (30 ns), and
``Final`` fields, which compiled code cannot set again (``AttributeError``).
:func:`finish_value`, called after each class, makes it pickle from its fields and, run from
source (``ERRDEX_PURE=1``), frozen.
"""

from __future__ import annotations

import copyreg
import inspect
from dataclasses import FrozenInstanceError, fields
from typing import Any, TypeVar

_T = TypeVar("_T")


def _refuse_assignment(self: object, name: str, value: object = None) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def finish_value(cls: type[_T]) -> type[_T]:
    """Finish a value class with ``Final`` fields: it pickles, and it is frozen in both modes.

    Called after the class statement (a class decorator would keep mypyc from compiling the
    class). Pickling and copying make an instance again from its fields (registered with
    :mod:`copyreg`: mypyc's classes do not pickle on their own). Compiled, its fields are
    read-only already. From source, it gets an ``__init__`` that takes the same parameters as
    its own (same order, same defaults) and stores them in the instance's ``__dict__``, and a
    ``__setattr__`` and ``__delattr__`` that raise :class:`dataclasses.FrozenInstanceError`.

    Raises:
        TypeError: The class's ``__init__`` takes ``*args`` or ``**kwargs``.
    """
    copyreg.pickle(cls, _reduce_value)
    init = cls.__init__
    if not inspect.isfunction(init):
        return cls  # compiled by mypyc: its fields are read-only already
    me, *given = inspect.signature(init).parameters.values()
    parameters: list[str] = []
    stores: list[str] = []
    defaults: dict[str, Any] = {}
    for parameter in given:
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            raise TypeError(f"{cls.__name__}.__init__ takes {parameter}: not supported")
        if parameter.kind is parameter.KEYWORD_ONLY and "*" not in parameters:
            parameters.append("*")  # keyword-only, as in its own
        name = parameter.name
        if parameter.default is parameter.empty:
            parameters.append(name)
        else:
            defaults[f"_default_{name}"] = parameter.default
            parameters.append(f"{name}=_default_{name}")
        # By the instance's own name: no other parameter has it (a field may be ``values``).
        stores.append(f"    {me.name}.__dict__[{name!r}] = {name}\n")
    source = f"def __init__({', '.join([me.name, *parameters])}):\n"
    namespace: dict[str, Any] = {}
    exec(source + ("".join(stores) or "    pass\n"), defaults, namespace)  # noqa: S102 - our own field names
    made = namespace["__init__"]
    made.__qualname__ = init.__qualname__
    made.__doc__ = init.__doc__
    cls.__init__ = made  # type: ignore[method-assign]
    cls.__setattr__ = _refuse_assignment  # type: ignore[method-assign]
    cls.__delattr__ = _refuse_assignment  # type: ignore[method-assign]
    return cls


def _reduce_value(value: Any) -> tuple[type, tuple[Any, ...]]:
    """How a value class pickles: made again from its fields."""
    return type(value), tuple(getattr(value, spec.name) for spec in fields(value))
