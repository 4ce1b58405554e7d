"""The Python syntax tree's node classes that errdex's analysis reads at run time.

``from errdex.analyze.nodes import Name`` in place of ``ast.Name`` where the class is used as
a value (``type(node) is Name``, ``isinstance(node, Call)``); annotations keep ``ast.Name``.
This module is compiled with the modules that use it (``errdex/_native.py``), and mypyc reads
a compiled module's ``Final`` names from C variables, where it looks ``ast.Name`` up in the
ast module at every use: those lookups were a tenth of the time of the extractor's walk over
a module's tree (#3).
"""

from __future__ import annotations

import ast
from typing import Final

Add: Final = ast.Add
And: Final = ast.And
AnnAssign: Final = ast.AnnAssign
Assert: Final = ast.Assert
Assign: Final = ast.Assign
AsyncFor: Final = ast.AsyncFor
AsyncFunctionDef: Final = ast.AsyncFunctionDef
AsyncWith: Final = ast.AsyncWith
Attribute: Final = ast.Attribute
AugAssign: Final = ast.AugAssign
Await: Final = ast.Await
BinOp: Final = ast.BinOp
BitOr: Final = ast.BitOr
BoolOp: Final = ast.BoolOp
Break: Final = ast.Break
Call: Final = ast.Call
ClassDef: Final = ast.ClassDef
Compare: Final = ast.Compare
Constant: Final = ast.Constant
Continue: Final = ast.Continue
Delete: Final = ast.Delete
Dict: Final = ast.Dict
Eq: Final = ast.Eq
ExceptHandler: Final = ast.ExceptHandler
Expr: Final = ast.Expr
For: Final = ast.For
FormattedValue: Final = ast.FormattedValue
FunctionDef: Final = ast.FunctionDef
GeneratorExp: Final = ast.GeneratorExp
Gt: Final = ast.Gt
GtE: Final = ast.GtE
If: Final = ast.If
IfExp: Final = ast.IfExp
Import: Final = ast.Import
ImportFrom: Final = ast.ImportFrom
In: Final = ast.In
Is: Final = ast.Is
IsNot: Final = ast.IsNot
JoinedStr: Final = ast.JoinedStr
Lambda: Final = ast.Lambda
List: Final = ast.List
ListComp: Final = ast.ListComp
Load: Final = ast.Load
Lt: Final = ast.Lt
LtE: Final = ast.LtE
Match: Final = ast.Match
MatchAs: Final = ast.MatchAs
MatchClass: Final = ast.MatchClass
MatchOr: Final = ast.MatchOr
MatchSingleton: Final = ast.MatchSingleton
MatchValue: Final = ast.MatchValue
Mod: Final = ast.Mod
Name: Final = ast.Name
Not: Final = ast.Not
NotEq: Final = ast.NotEq
NotIn: Final = ast.NotIn
Or: Final = ast.Or
Raise: Final = ast.Raise
Return: Final = ast.Return
Set: Final = ast.Set
SetComp: Final = ast.SetComp
Slice: Final = ast.Slice
Starred: Final = ast.Starred
Store: Final = ast.Store
Subscript: Final = ast.Subscript
Try: Final = ast.Try
Tuple: Final = ast.Tuple
USub: Final = ast.USub
UnaryOp: Final = ast.UnaryOp
While: Final = ast.While
With: Final = ast.With
Yield: Final = ast.Yield
YieldFrom: Final = ast.YieldFrom
