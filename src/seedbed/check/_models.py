"""Sequential specifications: what a correct, one-at-a-time system would do.

A model is any object with

- ``init()``: the initial state (hashable: states are memoized);
- ``step(state, op)``: the state after `Operation` ``op`` takes effect in
  ``state``, or `ILLEGAL` when a correct system could not have produced that
  result from that state. When ``op.known`` is False the result is unknown,
  so ``step`` must accept any result and only apply the effect;

and optionally

- ``partition(ops)``: split the operations into independent parts (for
  instance one per key) that are checked one by one. A history is
  linearizable exactly when every part is (P-compositionality), and the search
  cost is exponential in the size of a part, so this matters;
- ``describe(op)`` and ``describe_state(state)``: text for explanations;
- ``read_only(op)``: True when ``op`` changes the state in no state at all
  (a read, a get, a compare-and-set that reported failure). Such an
  operation, once legal where it can be linearized, can be committed to
  there: anything that follows it later could follow it now. The search then
  never tries alternatives to it, which often halves its work. Optional; a
  wrong True can give wrong verdicts, so leave it out when unsure;
- ``compile(op)``: a one-argument function equivalent to
  ``lambda state: step(state, op)``. The checker calls the step function
  millions of times; a closure that has already unpacked the operation is
  several times cheaper than re-reading it. Optional, purely for speed;
- ``effect(op)``: a hashable naming what ``step`` does with ``op`` (e.g.
  ``(op.f, op.value, op.known, op.result)``): two operations with equal
  effects must step alike in every state. The search then linearizes such
  operations of unknown outcome in invocation order, which loses nothing.
  Optional, purely for speed; a wrong answer can give wrong verdicts, so
  leave it out when unsure;
- ``observes(op)``: True when ``op`` completed with a result the model can
  refuse (a read's value, a compare-and-set's answer), and ``observed``, a
  phrase naming such operations ("read"). A history with none of them is
  linearizable whatever the system did: it cannot show the property, and
  the check says so instead of passing it (see `vacuous_reason`). Without
  ``observes``, any operation that completed ``ok`` counts.

Failed operations (``fail``) never reach a model: they had no effect. A model
that needs a rejected request to constrain the state (etcd's failed
compare-and-set saw a different value) records it as ``ok`` with a result
saying so, as the etcd parser does.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Final, Protocol, TypeAlias, runtime_checkable

from seedbed.check._history import Operation
from seedbed.errors import UsageError


class _Illegal(enum.Enum):
    ILLEGAL = "ILLEGAL"

    def __repr__(self) -> str:
        return "ILLEGAL"


ILLEGAL: Final = _Illegal.ILLEGAL
"""Returned by `Model.step` when an operation cannot happen in a state."""

State: TypeAlias = Hashable
StepResult: TypeAlias = Any  # a State, or ILLEGAL
StepFn: TypeAlias = Callable[[Any], Any]


@runtime_checkable
class Model(Protocol):
    """The protocol every model follows; see the module documentation."""

    name: str

    def init(self) -> State:
        """The state before any operation."""
        ...

    def step(self, state: Any, op: Operation) -> StepResult:
        """The state after ``op``, or `ILLEGAL`."""
        ...


def compile_step(model: Model, op: Operation) -> StepFn:
    """The model's fast step function for ``op``, or a generic wrapper."""
    fast = getattr(model, "compile", None)
    if fast is not None:
        fn: StepFn = fast(op)
        return fn
    step = model.step
    return lambda state: step(state, op)


def is_read_only(model: Model, op: Operation) -> bool:
    """``model.read_only(op)`` when the model has it, else False (always safe)."""
    check = getattr(model, "read_only", None)
    return bool(check(op)) if check is not None else False


def partition_of(model: Model, ops: Sequence[Operation]) -> list[tuple[Hashable, list[Operation]]]:
    """The model's independent parts of ``ops``, as (label, operations) pairs."""
    split = getattr(model, "partition", None)
    if split is None:
        return [(None, list(ops))]
    parts: list[tuple[Hashable, list[Operation]]] = list(split(ops))
    return parts


def describe_op(model: Model, op: Operation) -> str:
    """``model.describe(op)`` when the model has it, else a generic text."""
    describe = getattr(model, "describe", None)
    return str(describe(op)) if describe is not None else str(op)


def vacuous_reason(model: Model, ops: Sequence[Operation]) -> str | None:
    """Why ``ops`` cannot show linearizability under ``model``, or None when they can.

    Only an operation whose observed result the model could refuse can make
    a history non-linearizable; without one, "linearizable" is vacuously
    true (a run in which every read timed out), a false green.
    """
    observes = getattr(model, "observes", None)
    if observes is None:
        if any(op.status == "ok" for op in ops):
            return None
        return "no operation succeeded"
    if any(observes(op) for op in ops):
        return None
    observed = getattr(model, "observed", "operation whose result the model checks")
    return f"no {observed} succeeded, so no order could be refused"


class ModelError(UsageError):
    """An operation does not fit the model (wrong function or argument shape).

    ``op`` is the offending operation, so callers can point at its event.
    """

    def __init__(self, message: str, op: Operation) -> None:
        super().__init__(message)
        self.op = op


def _unknown_f(model: str, op: Operation) -> ModelError:
    return ModelError(f"{model} model: unsupported operation {op.f!r}", op)


# --- register ----------------------------------------------------------------


class Register:
    """A single read/write register: ``read`` returns the last ``write``.

    Operations: ``write`` (value = the new value) and ``read`` (result = the
    value read). The register starts out holding ``initial`` (None: empty).
    """

    name = "register"
    observed = "read"  # what `observes` accepts, for the vacuous verdict

    def __init__(self, initial: Hashable = None) -> None:
        self.initial = initial

    def init(self) -> State:
        return self.initial

    def step(self, state: Any, op: Operation) -> StepResult:
        return self.compile(op)(state)

    def compile(self, op: Operation) -> StepFn:
        if op.f == "write":
            return _const(op.value)
        if op.f == "read":
            return _identity if not op.known else _expect(op.result)
        raise _unknown_f(self.name, op)

    def read_only(self, op: Operation) -> bool:
        return op.f == "read"

    def observes(self, op: Operation) -> bool:
        return op.known and op.f == "read"

    def effect(self, op: Operation) -> Hashable:
        return (op.f, op.value, op.known, op.result)  # all that compile reads

    def describe(self, op: Operation) -> str:
        if op.f == "write":
            return f"write({op.value!r})"
        return f"read() -> {op.result!r}" if op.known else "read() -> ?"


def _identity(state: Any) -> Any:
    return state


def _const(value: Any) -> StepFn:
    return lambda state: value


def _expect(value: Any) -> StepFn:
    return lambda state: state if state == value else ILLEGAL


# --- compare-and-set register -------------------------------------------------


class CasRegister(Register):
    """A register with compare-and-set, the model of etcd's single key.

    ``cas`` takes value ``(expected, new)``; its result is True when the
    register held ``expected`` (and now holds ``new``) and False when it did
    not (and is unchanged). A cas whose outcome is unknown takes effect only
    if the register held ``expected``.
    """

    name = "cas-register"
    observed = "read or compare-and-set"  # what `observes` accepts, for the vacuous verdict

    def compile(self, op: Operation) -> StepFn:
        if op.f != "cas":
            return super().compile(op)
        try:
            expected, new = op.value
        except (TypeError, ValueError):
            raise ModelError("cas-register model: cas needs value [expected, new]", op) from None
        if not op.known:
            return lambda state: new if state == expected else state
        if op.result is True:
            return lambda state: new if state == expected else ILLEGAL
        if op.result is False:
            return lambda state: ILLEGAL if state == expected else state
        raise ModelError("cas-register model: cas result must be true or false", op)

    def read_only(self, op: Operation) -> bool:
        return op.f == "read" or (op.f == "cas" and op.known and op.result is False)

    def observes(self, op: Operation) -> bool:
        return op.known and op.f in ("read", "cas")

    def describe(self, op: Operation) -> str:
        if op.f != "cas":
            return super().describe(op)
        outcome = {True: "ok", False: "fail"}.get(op.result, "?") if op.known else "?"
        return f"cas({op.value[0]!r}, {op.value[1]!r}) -> {outcome}"


# --- key-value map ------------------------------------------------------------


class KeyValue:
    """A map from keys to strings with ``get``, ``put`` and ``append``.

    Every operation's value is ``(key, argument)``: ``put`` sets the key's
    string, ``append`` concatenates to it, ``get`` (argument None) reads it,
    with result ``(key, string)``; a missing key reads as ``""``. Keys are
    independent, so `partition` splits the history by key and each part's
    state is just that key's string.
    """

    name = "kv"
    observed = "get"  # what `observes` accepts, for the vacuous verdict

    def init(self) -> State:
        return ""

    def step(self, state: Any, op: Operation) -> StepResult:
        return self.compile(op)(state)

    def compile(self, op: Operation) -> StepFn:
        arg = op.value[1] if isinstance(op.value, tuple | list) and len(op.value) == 2 else None
        if op.f in ("put", "append") and not isinstance(arg, str):
            raise ModelError(f"kv model: {op.f} needs value [key, string]", op)
        if op.f == "put":
            return _const(arg)
        if op.f == "append":
            return lambda state: state + arg
        if op.f == "get":
            if not op.known:
                return _identity
            return _expect(_read_value(op))
        raise _unknown_f(self.name, op)

    def read_only(self, op: Operation) -> bool:
        return op.f == "get"

    def observes(self, op: Operation) -> bool:
        return op.known and op.f == "get"

    def effect(self, op: Operation) -> Hashable:
        return (op.f, op.value, op.known, op.result)  # all that compile reads

    def partition(self, ops: Sequence[Operation]) -> list[tuple[Hashable, list[Operation]]]:
        parts: dict[Hashable, list[Operation]] = {}
        for op in ops:
            parts.setdefault(_key(op), []).append(op)
        return list(parts.items())  # in order of first appearance: deterministic

    def describe(self, op: Operation) -> str:
        key, arg = op.value
        if op.f == "get":
            got = repr(_read_value(op)) if op.known else "?"
            return f"get({key!r}) -> {got}"
        return f"{op.f}({key!r}, {arg!r})"


def _key(op: Operation) -> Hashable:
    value = op.value
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ModelError("kv model: operation needs value [key, argument]", op)
    key: Hashable = value[0]
    return key


def _read_value(op: Operation) -> Any:
    result = op.result
    if isinstance(result, tuple | list) and len(result) == 2:
        result = result[1]
    return "" if result is None else result


def register(initial: Hashable = None) -> Register:
    """A read/write register starting at ``initial``."""
    return Register(initial)


def cas_register(initial: Hashable = None) -> CasRegister:
    """A compare-and-set register starting at ``initial`` (etcd's key)."""
    return CasRegister(initial)


def kv() -> KeyValue:
    """A key-value map of strings with get / put / append, split by key."""
    return KeyValue()


MODELS: Final[dict[str, Callable[[], Model]]] = {
    "register": register,
    "cas-register": cas_register,
    "kv": kv,
}
"""The built-in models by command-line name."""
