"""A node is a process: its memory is new at every start, its modules its own if asked.

A restart calls the node's main afresh: what main builds is new, what was
built before it is not. A main that is a bound method (or a callable
object) of an object built before the node started carries that object,
its locks held at the crash, its queues and caches, into every restart,
which no real restart does; `warn_if_prebuilt` says so once per node, with
the fix.

Modules are shared by every node of one Python process, so a library that
keeps its state in module globals or class attributes (a registry, a
singleton, `State.leader`) shares it between nodes, and keeps it across a
node's restarts. `isolate=["pkg", ...]` gives the node its own copies:
at each start of the node, inside its own context, the named packages (and
their submodules loaded in the process) are imported afresh, and `main` is
relinked to them (a submodule first imported later, from inside a function,
is shared): a main defined in an isolated module is looked up again in its
copy; any
other function (a lambda, a function of the test module) is rebuilt with
its globals and closure pointing at the copies, and so are the functions of
its own module that it calls. Objects built before the start keep their
classes: isolate the code, not the objects. Packages not named (the
standard library, seedbed, packages a copy imports) stay shared.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
import types
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from seedbed.errors import SeedbedWarning, UsageError


def warn_if_prebuilt(name: str, main: Callable[..., Any], *, stacklevel: int) -> None:
    """Warn if `main` carries an object built before the node started."""
    target = main.func if isinstance(main, functools.partial) else main
    owner = getattr(target, "__self__", None) if inspect.ismethod(target) else None
    method = getattr(target, "__name__", "start")
    if owner is None and _is_callable_object(target):
        owner, method = target, "__call__"
    if owner is None or isinstance(owner, type | types.ModuleType):
        return
    kind = type(owner).__qualname__
    call = f"{kind}()()" if method == "__call__" else f"{kind}().{method}()"
    warnings.warn(
        f"node {name!r}: its main is {'a bound method of ' if method != '__call__' else ''}"
        f"a {kind} object built before the node started, so every restart runs on that "
        f"same object: its locks, tasks and state outlive the crash, which a real restart "
        f"never keeps. Build the object inside main instead, e.g. "
        f"sim.host({name!r}, lambda: {call})",
        SeedbedWarning,
        stacklevel=stacklevel + 1,
    )


def _is_callable_object(target: object) -> bool:
    return (
        callable(target)
        and not isinstance(target, type)
        and not inspect.isroutine(target)
        and not isinstance(target, functools.partial)
    )


def check_isolate(isolate: Sequence[str] | None, name: str) -> tuple[str, ...]:
    """The module names of `isolate=`, checked: each a name that imports."""
    if isolate is None:
        return ()
    if isinstance(isolate, str) or not isinstance(isolate, list | tuple):
        raise UsageError(
            f"node {name!r}: isolate=... takes a list of module names, got {isolate!r:.60}"
        )
    for module in isolate:
        if not isinstance(module, str) or not module or module.startswith("."):
            raise UsageError(f"node {name!r}: isolate=[...] names modules, got {module!r:.60}")
        if module.split(".")[0] in ("seedbed", "asyncio") or module in sys.builtin_module_names:
            raise UsageError(f"node {name!r}: isolate=[...] cannot copy {module!r}; name the "
                             "program's own packages")  # fmt: skip
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise UsageError(
                f"node {name!r}: isolate=[{module!r}] does not import: {exc}"
            ) from None
    return tuple(isolate)


def _covered(module: str, names: Sequence[str]) -> bool:
    return any(module == n or module.startswith(n + ".") for n in names)


def import_fresh(names: Sequence[str], also: Sequence[str] = ()) -> dict[str, types.ModuleType]:
    """New copies of the modules `names` cover, as a fresh process would import them:
    the packages named, every submodule of theirs loaded now, and `also` where
    covered. `sys.modules` is left as it was."""
    saved = {k: v for k, v in sorted(sys.modules.items()) if _covered(k, names)}
    for key in saved:
        del sys.modules[key]
    try:
        for module in [*names, *(m for m in also if _covered(m, names)), *saved]:
            importlib.import_module(module)
        return {k: v for k, v in sorted(sys.modules.items()) if _covered(k, names)}
    finally:
        for key in [k for k in sys.modules if _covered(k, names)]:
            del sys.modules[key]
        sys.modules.update(saved)


def isolated_main(main: Callable[..., Any], names: Sequence[str]) -> Callable[..., Any]:
    """`main` relinked to fresh copies of the modules `names` cover (module docstring)."""
    wanted = getattr(getattr(main, "func", main), "__module__", None)
    copies = import_fresh(names, [wanted] if isinstance(wanted, str) else [])
    relinked: Callable[..., Any] = _Relinker(copies).relink(main)
    return relinked


class _Relinker:
    """Points functions and their globals at the copies (one relinking per start)."""

    def __init__(self, copies: dict[str, types.ModuleType]) -> None:
        self.copies = copies
        self.originals = {id(m): name for name, m in ((n, sys.modules.get(n)) for n in copies) if m}
        self.rebuilt: dict[int, Any] = {}  # id(original globals) -> its new globals

    def relink(self, value: Any) -> Any:
        if isinstance(value, functools.partial):
            args = [self.translate(a) for a in value.args]
            keywords = {k: self.translate(v) for k, v in value.keywords.items()}
            return functools.partial(self.relink(value.func), *args, **keywords)
        if inspect.ismethod(value):
            return types.MethodType(self.relink(value.__func__), value.__self__)
        copied = self._in_copy(value)
        if copied is not None:
            return copied
        if isinstance(value, types.FunctionType):
            return self._rebuild(value)
        return value

    def translate(self, value: Any) -> Any:
        """A module or a module-level object of an isolated module: its copy's."""
        if isinstance(value, types.ModuleType):
            name = self.originals.get(id(value))
            return self.copies[name] if name is not None else value
        copied = self._in_copy(value)
        return value if copied is None else copied

    def _in_copy(self, value: Any) -> Any:
        module = getattr(value, "__module__", None)
        qualname = getattr(value, "__qualname__", None)
        if not isinstance(module, str) or module not in self.copies or not qualname:
            return None
        if not isinstance(value, type | types.FunctionType) or "<locals>" in qualname:
            return None
        found: Any = self.copies[module]
        for part in qualname.split("."):
            found = getattr(found, part, None)
        return found

    def _rebuild(self, function: types.FunctionType) -> types.FunctionType:
        """`function` with its globals and closure pointing at the copies."""
        namespace = self._globals(function.__globals__)
        cells = function.__closure__
        if cells is not None:
            cells = tuple(self._cell(cell) for cell in cells)
        rebuilt = types.FunctionType(
            function.__code__, namespace, function.__name__, function.__defaults__, cells
        )
        rebuilt.__kwdefaults__ = function.__kwdefaults__
        rebuilt.__qualname__ = function.__qualname__
        rebuilt.__module__ = function.__module__
        return rebuilt

    def _cell(self, cell: types.CellType) -> types.CellType:
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell (a name bound later): it stays empty
            return types.CellType()
        return types.CellType(self.translate(contents))

    def _globals(self, original: dict[str, Any]) -> dict[str, Any]:
        """A copy of a module's globals, its isolated references translated, its own
        functions rebuilt over the copy (so what they call is relinked too)."""
        found = self.rebuilt.get(id(original))
        if found is not None:
            return found  # type: ignore[no-any-return]
        namespace = dict(original)
        self.rebuilt[id(original)] = namespace
        for key, value in list(namespace.items()):
            if isinstance(value, types.FunctionType) and value.__globals__ is original:
                namespace[key] = self._rebuild(value)
            else:
                namespace[key] = self.translate(value)
        return namespace
