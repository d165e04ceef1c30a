"""Which expressions are sets, and whether their iteration order can change.

A set's iteration order is a function of its elements' hashes. For ints,
floats, tuples of them and seedbed's tasks (which hash by creation number)
that is the same in every process; for strings and bytes it changes with
PYTHONHASHSEED, and for objects without `__hash__` with memory addresses.
So a set is "safe" when its elements are known to be of the first kind and
"risky" otherwise (unknown elements included: the lint cannot prove them
safe, and the fix, `sorted(...)` or an annotation, costs nothing).

Known sets: displays (`{"a", "b"}`), comprehensions, `set(...)` and
`frozenset(...)`, set operators and methods on a known set, and names (and
`self.attributes`) that every binding in their scope makes a set, or that are
annotated as one. Elements come from the annotation (`set[int]`), the
display's items, or, for a name bound to an empty `set()`, what the scope
`.add`s to it (`tasks.add(asyncio.create_task(...))`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from seedbed._lint._names import Names

Kind = Literal["safe", "risky"]

_SET_TYPES = frozenset({"set", "frozenset", "Set", "AbstractSet", "MutableSet", "FrozenSet"})
# Not Future: seedbed's tasks hash by creation number, but futures from
# `loop.create_future()` hash by address (see `seedbed.aio._ordering`).
_SAFE_TYPES = frozenset({"int", "float", "bool", "complex", "None", "Task"})
_SET_METHODS = frozenset({"union", "intersection", "difference", "symmetric_difference", "copy"})
_SET_OPS = (ast.BitOr, ast.BitAnd, ast.Sub, ast.BitXor)
_TASK_MAKERS = frozenset({"create_task", "ensure_future"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)

Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass
class _Bindings:
    """What one scope binds a name (or a class an attribute) to."""

    values: list[ast.expr | None] = field(default_factory=list)  # None: not an expression
    annotation: ast.expr | None = None
    # What is `.add`ed, with the scope the add is in (where its names resolve).
    adds: list[tuple[ast.expr, Scope]] = field(default_factory=list)


_Getter = Callable[[str], _Bindings]


class SetTypes:
    """Answers "is this expression a set, and is its order safe?" for one module."""

    def __init__(self, names: Names) -> None:
        self._names = names
        self._scopes: dict[ast.AST, dict[str, _Bindings]] = {}
        self._classes: dict[ast.AST, dict[str, _Bindings]] = {}

    # -- the question -----------------------------------------------------------

    def kind(self, node: ast.expr, scopes: list[Scope], cls: ast.ClassDef | None) -> Kind | None:
        """None if `node` is not known to be a set; else whether its order is safe."""
        return self._kind(node, scopes, cls, depth=0)

    def _kind(
        self, node: ast.expr, scopes: list[Scope], cls: ast.ClassDef | None, depth: int
    ) -> Kind | None:
        if depth > 4:
            return None
        if isinstance(node, ast.Set):
            return _all(self._element(e, scopes, depth) for e in node.elts)
        if isinstance(node, ast.SetComp):
            return self._element(node.elt, scopes, depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, _SET_OPS):
            sides = [self._kind(s, scopes, cls, depth + 1) for s in (node.left, node.right)]
            known = [s for s in sides if s is not None]
            return _all(known) if known else None
        if isinstance(node, ast.Call):
            return self._call(node, scopes, cls, depth)
        if isinstance(node, ast.Name):
            return self._name(node.id, scopes, cls, depth)
        if _is_self_attribute(node) and cls is not None:
            assert isinstance(node, ast.Attribute)
            return self._of(self._class(cls).get(node.attr), scopes, cls, depth)
        return None

    def _call(
        self, node: ast.Call, scopes: list[Scope], cls: ast.ClassDef | None, depth: int
    ) -> Kind | None:
        name = self._names.qualname(node.func)
        if name in ("builtins.set", "builtins.frozenset"):
            if not node.args:
                return None  # empty: its kind comes from what is added (see _of)
            return self._contents(node.args[0], scopes, cls, depth)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _SET_METHODS:
            base = self._kind(func.value, scopes, cls, depth + 1)
            if base is not None:
                others = [self._contents(a, scopes, cls, depth) for a in node.args]
                return _all([base, *others])
        return None

    def _contents(
        self, node: ast.expr, scopes: list[Scope], cls: ast.ClassDef | None, depth: int
    ) -> Kind:
        """The kind of a set built from the iterable `node`."""
        if isinstance(node, ast.Call) and self._names.qualname(node.func) == "builtins.range":
            return "safe"
        if isinstance(node, ast.List | ast.Tuple):
            return _all(self._element(e, scopes, depth) for e in node.elts)
        annotation = self._annotation(node, scopes, cls)
        if annotation is not None:  # `set(self._tasks)`, `self._tasks: list[Task[Any]]`
            return _container_kind(annotation)
        return self._kind(node, scopes, cls, depth + 1) or "risky"

    def _annotation(
        self, node: ast.expr, scopes: list[Scope], cls: ast.ClassDef | None
    ) -> ast.expr | None:
        """The declared type of a name or `self.attribute`, if it has one."""
        bound: _Bindings | None = None
        if isinstance(node, ast.Name):
            for scope in reversed(scopes):
                bound = self._scope(scope).get(node.id)
                if bound is not None:
                    break
        elif _is_self_attribute(node) and cls is not None:
            assert isinstance(node, ast.Attribute)
            bound = self._class(cls).get(node.attr)
        return bound.annotation if bound is not None else None

    def _name(
        self, name: str, scopes: list[Scope], cls: ast.ClassDef | None, depth: int
    ) -> Kind | None:
        for scope in reversed(scopes):  # the innermost scope that binds it
            bound = self._scope(scope).get(name)
            if bound is not None:
                return self._of(bound, scopes, cls, depth)
        return None

    def _of(
        self, bound: _Bindings | None, scopes: list[Scope], cls: ast.ClassDef | None, depth: int
    ) -> Kind | None:
        """The kind of a name or attribute from all its bindings (None: not always a set)."""
        if bound is None:
            return None
        if bound.annotation is not None:
            return self._annotated(bound.annotation)
        if not bound.values or any(v is None for v in bound.values):
            return None
        kinds: list[Kind] = []
        for value in bound.values:
            assert value is not None
            if _is_empty_set(value, self._names):
                adds = [self._element(a, [*scopes, where], depth) for a, where in bound.adds]
                kinds.append(_all(adds) if adds else "risky")
                continue
            kind = self._kind(value, scopes, cls, depth + 1)
            if kind is None:
                return None
            kinds.append(kind)
        return _all(kinds)

    def _annotated(self, annotation: ast.expr) -> Kind | None:
        """`set[int]` is safe, `set[str]` risky, `list[str]` not a set."""
        annotation = _parsed(annotation)
        if isinstance(annotation, ast.Subscript):
            if _last_name(annotation.value) not in _SET_TYPES:
                return None
            return "safe" if _safe_type(annotation.slice) else "risky"
        return "risky" if _last_name(annotation) in _SET_TYPES else None

    def _element(self, node: ast.expr, scopes: list[Scope], depth: int) -> Kind:
        """Whether one element's hash is the same in every process."""
        if isinstance(node, ast.Constant):
            return "risky" if isinstance(node.value, str | bytes) else "safe"
        if isinstance(node, ast.Tuple):
            return _all(self._element(e, scopes, depth) for e in node.elts)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute | ast.Name) and _last_name(func) in _TASK_MAKERS:
                return "safe"
            if self._names.qualname(func) in ("builtins.int", "builtins.len", "builtins.id"):
                return "safe"
            return "risky"
        if isinstance(node, ast.Name) and depth < 4:
            for scope in reversed(scopes):
                bound = self._scope(scope).get(node.id)
                if bound is not None:
                    values = [v for v in bound.values if v is not None]
                    if not values or len(values) != len(bound.values):
                        return "risky"
                    return _all(self._element(v, scopes, depth + 1) for v in values)
        return "risky"

    # -- what each scope binds ------------------------------------------------

    def _scope(self, scope: Scope) -> dict[str, _Bindings]:
        found = self._scopes.get(scope)
        if found is None:
            found = self._scopes[scope] = _scope_bindings(scope)
        return found

    def _class(self, cls: ast.ClassDef) -> dict[str, _Bindings]:
        found = self._classes.get(cls)
        if found is None:
            found = self._classes[cls] = _class_bindings(cls)
        return found


def _all(kinds: Iterable[Kind]) -> Kind:
    """Safe only if every part is (an empty display is safe)."""
    return "safe" if all(k == "safe" for k in kinds) else "risky"


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    return None


def _container_kind(annotation: ast.expr) -> Kind:
    """What iterating a value of this declared type yields: `list[int]` safe elements."""
    annotation = _parsed(annotation)
    if not isinstance(annotation, ast.Subscript):
        return "risky"
    if _last_name(annotation.value) == "tuple":
        return "safe" if _safe_type(annotation) else "risky"
    first = (
        annotation.slice.elts[0] if isinstance(annotation.slice, ast.Tuple) else annotation.slice
    )
    return "safe" if _safe_type(first) else "risky"


def _parsed(node: ast.expr) -> ast.expr:
    """A string annotation (`"asyncio.Task[Any]"`) as the expression it spells."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return node
    return node


def _safe_type(node: ast.expr) -> bool:
    """An element type whose hash does not depend on the process."""
    node = _parsed(node)
    if isinstance(node, ast.Subscript):  # Task[None], tuple[int, int]
        if _last_name(node.value) == "tuple":
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return all(_safe_type(p) for p in parts if not _is_ellipsis(p))
        return _last_name(node.value) in _SAFE_TYPES
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # int | None
        return _safe_type(node.left) and _safe_type(node.right)
    return _last_name(node) in _SAFE_TYPES


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _is_empty_set(node: ast.expr, names: Names) -> bool:
    return (
        isinstance(node, ast.Call)
        and not node.args
        and names.qualname(node.func) in ("builtins.set", "builtins.frozenset")
    )


def _is_self_attribute(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of one scope, not those of the functions and classes inside it."""
    out: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, _SCOPES):
            continue  # its name is bound here (see _scope_bindings); its body is not ours
        todo.extend(ast.iter_child_nodes(node))
    return out


def _scope_bindings(scope: Scope) -> dict[str, _Bindings]:
    bound: dict[str, _Bindings] = {}

    def get(name: str) -> _Bindings:
        return bound.setdefault(name, _Bindings())

    if not isinstance(scope, ast.Module):
        args = scope.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                get(arg.arg).values.append(None)
                if arg.annotation is not None and arg is not args.vararg and arg is not args.kwarg:
                    get(arg.arg).annotation = arg.annotation
    for node in own_nodes(scope):
        _bind(node, get, scope)
    return bound


def _bind(node: ast.AST, get: _Getter, scope: Scope) -> None:
    """Record what one node of a scope binds."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                get(target.id).values.append(node.value)
            else:
                _unknown_targets(target, get)
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        get(node.target.id).annotation = node.annotation
        get(node.target.id).values.append(node.value)
    elif isinstance(node, ast.NamedExpr):
        get(node.target.id).values.append(node.value)
    elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
        _unknown_targets(node.target, get)
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        _unknown_targets(node.optional_vars, get)
    elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
        get(node.name).values.append(None)  # a capture pattern: not known to be a set
    elif isinstance(node, ast.MatchMapping) and node.rest:
        get(node.rest).values.append(None)
    elif isinstance(node, ast.Global | ast.Nonlocal):
        for name in node.names:  # bound elsewhere: unknown here
            get(name).values.append(None)
    elif isinstance(node, ast.Import | ast.ImportFrom):
        for alias in node.names:
            get((alias.asname or alias.name).split(".")[0]).values.append(None)
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) or (
        isinstance(node, ast.ExceptHandler) and node.name
    ):
        assert node.name is not None
        get(node.name).values.append(None)
    elif isinstance(node, ast.Call) and _is_add(node) and isinstance(node.func, ast.Attribute):
        receiver = node.func.value
        if isinstance(receiver, ast.Name):
            get(receiver.id).adds.append((node.args[0], scope))


def _unknown_targets(target: ast.expr, get: _Getter) -> None:
    """Names bound by unpacking, loops and `with`: not known to be sets."""
    for node in ast.walk(target):
        if isinstance(node, ast.Name):
            get(node.id).values.append(None)


def _is_add(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Attribute) and node.func.attr == "add" and len(node.args) == 1


def _class_bindings(cls: ast.ClassDef) -> dict[str, _Bindings]:
    """`self.x` of a class: its class-level annotation, what its methods assign and add."""
    bound: dict[str, _Bindings] = {}

    def get(name: str) -> _Bindings:
        return bound.setdefault(name, _Bindings())

    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            get(stmt.target.id).annotation = stmt.annotation
    methods = [n for n in ast.walk(cls) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for method in methods:
        for node in own_nodes(method):
            _bind_attribute(node, get, method)
    return bound


def _bind_attribute(node: ast.AST, get: _Getter, method: Scope) -> None:
    """Record what one node of a method binds or adds to `self.x`."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if _is_self_attribute(target):
                assert isinstance(target, ast.Attribute)
                get(target.attr).values.append(node.value)
    elif isinstance(node, ast.AnnAssign) and _is_self_attribute(node.target):
        assert isinstance(node.target, ast.Attribute)
        get(node.target.attr).annotation = node.annotation
    elif isinstance(node, ast.Call) and _is_add(node):
        assert isinstance(node.func, ast.Attribute)
        if _is_self_attribute(node.func.value):
            assert isinstance(node.func.value, ast.Attribute)
            get(node.func.value.attr).adds.append((node.args[0], method))
