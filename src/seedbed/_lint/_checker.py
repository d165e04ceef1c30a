"""The walk over one module's syntax tree that finds the uses the rules name.

The one distinction that matters for clocks and entropy is *when* code runs.
Inside a run seedbed virtualizes `time.time()`, `random.random()` and the
rest (docs/reference/interposition.md), so a call in a function body is fine. Code
that runs at import time does not run inside a run: module-level statements,
class bodies (of classes defined at import time), default values and
decorators of functions defined at import time. There a clock or entropy
read holds the machine's value for the life of the process. The body of
`if __name__ == "__main__":` is a script's main, not an import.

Escapes (threads, processes, sockets, blocking waits) and orders set by
hashing are reported wherever they are.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from seedbed._lint import _catalog as cat
from seedbed._lint._names import Names
from seedbed._lint._rules import RULES
from seedbed._lint._sets import Scope, SetTypes, own_nodes


@dataclass(frozen=True, order=True)
class Finding:
    """One use that can make a run nondeterministic or escape the simulation."""

    path: str
    line: int
    col: int  # 1-based
    code: str
    message: str
    fix: str

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "col": self.col, "code": self.code,
                "message": self.message, "fix": self.fix}  # fmt: skip

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message} (fix: {self.fix})"


# (the node found, its rule's code, what is wrong)
Emit = Callable[[ast.AST, str, str], None]

# Consumers for which the order of what they iterate does not matter.
_ORDER_FREE = frozenset(
    f"builtins.{name}" for name in ("sorted", "set", "frozenset", "any", "all", "min", "max",
                                    "sum", "len")
)  # fmt: skip
# Consumers that keep the order of what they iterate.
_ORDERED = frozenset(
    f"builtins.{name}" for name in ("list", "tuple", "enumerate", "zip", "iter", "map", "filter",
                                    "next", "reversed")
)  # fmt: skip
# Consumers that pass their argument's order on to their own consumer.
_KEEPS_ORDER = frozenset(
    f"builtins.{name}" for name in ("list", "tuple", "iter", "map", "filter", "reversed")
)
# Calls that turn a hash or an address into output.
_AS_DATA = frozenset(f"builtins.{name}" for name in ("str", "repr", "hex", "format", "print"))
_ORDERING_OPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


class Checker(ast.NodeVisitor):
    """Visits one module; reports through `emit(node, code, message)`."""

    def __init__(self, tree: ast.Module, emit: Emit) -> None:
        self._emit = emit
        self._names = Names(tree)
        self._sets = SetTypes(self._names)
        self._parents: dict[ast.AST, ast.AST] = {}
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self._parents[child] = parent
        self._import_time = True
        self._scopes: list[Scope] = [tree]
        self._classes: list[ast.ClassDef | None] = [None]
        self._functions: list[str] = []
        self._cached = False  # inside the body of a functools.cache'd function
        self._local_reads = _local_reads(tree, self._names)
        self._reported: set[ast.AST] = set()  # membership only, never iterated

    # -- context: when does this code run? -------------------------------------

    @contextmanager
    def _runtime(
        self, scope: Scope | None, name: str | None, cached: bool = False
    ) -> Iterator[None]:
        saved, saved_cached = self._import_time, self._cached
        self._import_time, self._cached = False, cached
        if scope is not None:
            self._scopes.append(scope)
        if name is not None:
            self._functions.append(name)
        try:
            yield
        finally:
            self._import_time, self._cached = saved, saved_cached
            if scope is not None:
                self._scopes.pop()
            if name is not None:
                self._functions.pop()

    def _visit_all(self, nodes: list[ast.stmt] | list[ast.expr]) -> None:
        for node in nodes:
            self.visit(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # Decorators, defaults and annotations run where the `def` does.
        self._visit_all(node.decorator_list)
        self._arguments(node.args)
        cached = any(self._is_cache(d) for d in node.decorator_list)
        with self._runtime(node, node.name, cached):
            self._visit_all(node.body)

    def _is_cache(self, decorator: ast.expr) -> bool:
        """`@functools.cache`, `@lru_cache(maxsize=...)`: the result outlives a run."""
        func = decorator.func if isinstance(decorator, ast.Call) else decorator
        return self._names.qualname(func) in cat.CACHES

    def _arguments(self, args: ast.arguments) -> None:
        self._visit_all(args.defaults)
        self._visit_all([d for d in args.kw_defaults if d is not None])

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._arguments(node.args)
        with self._runtime(node, "<lambda>"):
            self.visit(node.body)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        # A class body runs when the class statement does: at import time for
        # a module-level class.
        for base in node.bases:
            code = cat.ESCAPE_BASES.get(self._names.qualname(base) or "")
            if code is not None:
                self._report(base, code, f"class {node.name} subclasses {ast.unparse(base)}")
        self._visit_all(node.decorator_list)
        self._visit_all(node.bases)
        self._visit_all([k.value for k in node.keywords])
        self._classes.append(node)
        try:
            self._visit_all(node.body)
        finally:
            self._classes.pop()

    def visit_If(self, node: ast.If) -> None:
        if self._import_time and len(self._scopes) == 1 and _is_main_guard(node.test):
            with self._runtime(None, None):
                self._visit_all(node.body)
            self._visit_all(node.orelse)
            return
        self.generic_visit(node)

    # -- calls -----------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        name = self._names.qualname(node.func)
        if name is not None:
            self._named_call(node, name)
        elif self._import_time and isinstance(node.func, ast.Name):
            self._local_call(node, node.func.id)
        self._key_argument(node)
        self._set_consumer(node, name)
        self.generic_visit(node)

    def _named_call(self, node: ast.Call, name: str) -> None:
        code = cat.ESCAPES.get(name)
        if code is not None:
            self._report(node, code, f"{name}() {_ESCAPE_WORDS[code]}")
        elif name in cat.SEEDABLE or name in cat.UNSEEDABLE:
            self._generator(node, name)
        elif name.startswith("numpy.random."):
            self._numpy(node, name)
        elif self._import_time and _reads_clock(node, name):
            self._report(node, "SB101", f"{name}() is read once, at import time")
        elif self._import_time and name in cat.ENTROPY:
            self._report(node, "SB102", f"{name}() is drawn once, at import time")
        elif self._cached and (_reads_clock(node, name) or name in cat.ENTROPY):
            self._report(node, "SB104", f"{name}() in a cached function: the first value is kept")
        elif name == "builtins.hash" and "__hash__" not in self._functions:
            self._hash_or_id_value(node, "hash()", "SB402")
        elif name == "builtins.id" and not {"__repr__", "__str__"} & set(self._functions[-1:]):
            self._hash_or_id_value(node, "id()", "SB403")

    def _local_call(self, node: ast.Call, name: str) -> None:
        """`TIMER = make_timer()`: a function of this module that reads the clock, run
        at import time (what it returns may hold the value in a closure)."""
        read = self._local_reads.get(name)
        if read is not None:
            what, code = read
            self._report(node, code, f"{name}() reads {what}() when it runs, here at import time")

    def _generator(self, node: ast.Call, name: str) -> None:
        if name in cat.UNSEEDABLE or _unseeded(node):
            self._report(node, "SB201", f"{name}() has no seed")
        elif self._import_time:
            self._report(node, "SB203", f"{name}(...) at import time is shared by every run")

    def _numpy(self, node: ast.Call, name: str) -> None:
        if name in cat.NUMPY_QUIET:
            return
        if name not in cat.NUMPY_SEEDABLE:
            self._report(node, "SB202", f"{name}() draws from numpy's global generator")
        elif _unseeded(node):
            self._report(node, "SB202", f"{name}() has no seed")
        elif self._import_time:
            self._report(node, "SB203", f"{name}(...) at import time is shared by every run")

    def _key_argument(self, node: ast.Call) -> None:
        """`sorted(xs, key=id)`, `key=hash`, `key=lambda x: id(x)`."""
        for keyword in node.keywords:
            if keyword.arg != "key":
                continue
            value = keyword.value
            calls: list[ast.expr] = [value] if isinstance(value, ast.Name) else []
            if isinstance(value, ast.Lambda):
                calls = [c.func for c in ast.walk(value.body) if isinstance(c, ast.Call)]
            for func in calls:
                which = self._names.qualname(func)
                if which in ("builtins.id", "builtins.hash"):
                    self._report(value, "SB401", f"ordered by {which.removeprefix('builtins.')}()")
                    self._reported.update(
                        c for c in ast.walk(value) if isinstance(c, ast.Call)
                    )  # one finding, not one more per inner call
                    break

    def _hash_or_id_value(self, node: ast.Call, what: str, code: str) -> None:
        """A hash or an address ordered, computed with or formatted (a dict key is fine)."""
        if node in self._reported:
            return
        parent = self._parents.get(node)
        if isinstance(parent, ast.Compare) and any(
            isinstance(o, _ORDERING_OPS) for o in parent.ops
        ):
            self._report(node, "SB401", f"{what} compared for order")
        elif isinstance(parent, ast.BinOp | ast.FormattedValue):
            self._report(node, code, f"{what} used as a number or formatted")
        elif (
            isinstance(parent, ast.Call)
            and node in parent.args
            and self._names.qualname(parent.func) in _AS_DATA
        ):
            self._report(node, code, f"{what} used as data")

    # -- references that are not calls ------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self._import_time and not self._called(node):
            name = self._names.qualname(node)
            if name in cat.BOUND_CLOCKS:
                self._report(node, "SB103", f"{name} is a bound method of the real class")
            elif name in cat.CLOCKS and self._in_display(node):
                self._report(node, "SB103", f"{name} in a tuple, list or set is never rebound")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if self._import_time and isinstance(node.ctx, ast.Load) and not self._called(node):
            name = self._names.qualname(node)
            if name in cat.CLOCKS and self._in_display(node):
                self._report(node, "SB103", f"{name} in a tuple, list or set is never rebound")

    def _called(self, node: ast.expr) -> bool:
        parent = self._parents.get(node)
        return isinstance(parent, ast.Call) and parent.func is node

    def _in_display(self, node: ast.expr) -> bool:
        """In a tuple, list or set that is kept (`a, b = (f, g)` only unpacks it)."""
        display = self._parents.get(node)
        if not isinstance(display, ast.Tuple | ast.List | ast.Set):
            return False
        statement = self._parents.get(display)
        unpacked = isinstance(statement, ast.Assign) and all(
            isinstance(t, ast.Tuple | ast.List) for t in statement.targets
        )
        return not unpacked

    # -- iteration over sets ------------------------------------------------------

    def _risky_set(self, node: ast.expr) -> bool:
        return self._sets.kind(node, self._scopes, self._classes[-1]) == "risky"

    def _set_iteration(self, iterable: ast.expr, how: str) -> None:
        if self._risky_set(iterable):
            self._report(iterable, "SB411", f"{how} a set, in hash order")

    def visit_For(self, node: ast.For) -> None:
        self._set_iteration(node.iter, "a loop over")
        self.generic_visit(node)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> None:
        self._set_iteration(node.iter, "a loop over")
        self.generic_visit(node)

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp | ast.DictComp) -> None:
        if not self._order_free(node):
            for generator in node.generators:
                self._set_iteration(generator.iter, "a comprehension over")
        self.generic_visit(node)

    def _order_free(self, node: ast.expr) -> bool:
        """Is what `node` yields consumed in no particular order (`sorted(map(f, s))`)?

        Climbs through consumers that keep the order (`map`, `filter`, `list`,
        comprehensions) to one that drops it (`sorted`, `set`, `len`, `any`...).
        """
        while True:
            parent = self._parents.get(node)
            if isinstance(parent, ast.comprehension):
                parent = self._parents.get(parent)
                if isinstance(parent, ast.SetComp):
                    return True
                if not isinstance(parent, ast.ListComp | ast.GeneratorExp):
                    return False
            elif isinstance(parent, ast.Call) and node in parent.args:
                name = self._names.qualname(parent.func)
                if name in _ORDER_FREE:
                    return True
                if name not in _KEEPS_ORDER:
                    return False
            else:
                return False
            node = parent

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node)

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> None:
        self._comprehension(node)

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node)

    def visit_Starred(self, node: ast.Starred) -> None:
        self._set_iteration(node.value, "unpacking")
        self.generic_visit(node)

    def _set_consumer(self, node: ast.Call, name: str | None) -> None:
        """`list(s)`, `", ".join(s)`, `s.pop()`: each keeps (or picks by) hash order."""
        func = node.func
        if self._order_free(node):
            return
        if name in _ORDERED:
            for arg in node.args:
                self._set_iteration(arg, f"{name.removeprefix('builtins.')}() of")
        elif _is_dict_fromkeys(func) and node.args:
            self._set_iteration(node.args[0], "dict.fromkeys() of")
        elif isinstance(func, ast.Attribute) and func.attr == "join" and len(node.args) == 1:
            self._set_iteration(node.args[0], "join() of")
        elif (
            isinstance(func, ast.Attribute)
            and func.attr == "pop"
            and not node.args
            and self._risky_set(func.value)
        ):
            self._report(node, "SB411", "pop() takes an element of a set, in hash order")

    # -- reporting ---------------------------------------------------------------

    def _report(self, node: ast.AST, code: str, message: str) -> None:
        assert code in RULES, code
        self._reported.add(node)
        self._emit(node, code, message)


_ESCAPE_WORDS = {
    "SB301": "starts a raw thread",
    "SB302": "starts a child process",
    "SB303": "opens a real socket or network connection",
    "SB304": "blocks in real time",
    "SB305": "waits in real time",
}


def _local_reads(tree: ast.Module, names: Names) -> dict[str, tuple[str, str]]:
    """Module-level functions whose own body reads a clock (SB101) or entropy (SB102):
    name -> (the first function read, in source order, and its rule)."""
    reads: dict[str, tuple[str, str]] = {}
    for stmt in tree.body:
        if not isinstance(stmt, ast.FunctionDef):  # calling an async def runs nothing
            continue
        found = [
            (node.lineno, node.col_offset, name)
            for node in own_nodes(stmt)
            if isinstance(node, ast.Call)
            and (name := names.qualname(node.func)) is not None
            and (_reads_clock(node, name) or name in cat.ENTROPY)
        ]
        if found:
            name = min(found)[2]
            reads[stmt.name] = (name, "SB102" if name in cat.ENTROPY else "SB101")
    return reads


def _is_dict_fromkeys(func: ast.expr) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "fromkeys"
        and isinstance(func.value, ast.Name)
        and func.value.id == "dict"
    )


def _reads_clock(node: ast.Call, name: str) -> bool:
    if name in cat.CLOCKS:
        return True
    before_time = cat.NOW_BY_DEFAULT.get(name)
    return before_time is not None and len(node.args) <= before_time and not node.keywords


def _unseeded(node: ast.Call) -> bool:
    """No seed argument, or an explicit None."""
    seed = node.args[0] if node.args else None
    for keyword in node.keywords:
        if keyword.arg in ("x", "a", "seed"):
            seed = keyword.value
    if seed is None:
        return not any(isinstance(a, ast.Starred) for a in node.args) and not any(
            k.arg is None for k in node.keywords
        )
    return isinstance(seed, ast.Constant) and seed.value is None


def _is_main_guard(test: ast.expr) -> bool:
    """`if __name__ == "__main__":`."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )
