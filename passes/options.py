"""Pass options checked where a pipeline is parsed, before any pass runs.

`CleavePass` is the base of every Cleave-IR pass with options. Its `from_spec` (what `cleave-opt
-p 'cleave-x{a=1}'` and xdsl-opt call) accepts an integer where a float is expected
(`time-limit=5`), says which pass and option a bad value belongs to and what it expects, and runs
the pass's `check_options`, so `cleave-pipeline{top-k=0}` fails at once, not after the search.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import NoneType, UnionType
from typing import Any, Self, Union, get_args, get_origin, get_type_hints

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, ParameterListType

from cleave_ir.diagnostics import CleaveError

_KINDS = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}
_LISTS = {int: "a comma-separated list of integers", float: "a comma-separated list of numbers"}


def _expected(hint: Any) -> str:
    """What an option of type `hint` takes, in words."""
    if get_origin(hint) in (Union, UnionType):
        hint = next(a for a in get_args(hint) if a is not NoneType)
    if get_origin(hint) is tuple:
        return _LISTS.get(get_args(hint)[0], str(hint))
    return _KINDS.get(hint, str(hint))


def _floats(values: ParameterListType, hint: Any) -> ParameterListType:
    """`values` with integers made floats where `hint` wants floats."""
    args = [a for a in get_args(hint) if a is not NoneType] if get_origin(hint) in (Union, UnionType) else [hint]
    wants = args[0] if len(args) == 1 else None
    if wants is float or (get_origin(wants) is tuple and get_args(wants)[0] is float):
        return tuple(float(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in values)
    return values


@dataclass(frozen=True)
class CleavePass(ModulePass):
    """A pass whose options are converted and checked when it is parsed from a pipeline spec."""

    def check_options(self) -> None:
        """Raise a CleaveError naming an option whose value the pass cannot run with."""

    @classmethod
    def from_spec(cls, spec: ArgSpec) -> Self:
        hints = get_type_hints(cls)
        fields = [f.name for f in dataclasses.fields(cls) if f.init]
        spelled = {k.replace("-", "_"): k for k in spec.parameters}
        params: dict[str, ParameterListType] = {}
        for key, values in spec.normalize_parameter_names().parameters.items():
            if key not in fields:
                known = ", ".join(f.replace("_", "-") for f in fields) or "none"
                raise CleaveError(f"error: {cls.name}: unknown option '{spelled[key]}' (options: {known})")
            params[key] = _floats(values, hints[key])
        try:
            instance = super().from_spec(ArgSpec(spec.name, params))
        except ValueError:
            bad = next(
                (k for k, v in params.items() if not _accepts(v, hints[k])), next(iter(params), "")
            )
            given = ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in params.get(bad, ()))
            raise CleaveError(
                f"error: {cls.name}: option {spelled.get(bad, bad)} expects {_expected(hints.get(bad))}, got '{given}'"
            ) from None
        instance.check_options()
        return instance


def _accepts(values: ParameterListType, hint: Any) -> bool:
    """Whether xDSL's conversion takes `values` for an option of type `hint`."""
    from xdsl.utils.arg_spec import _convert_arg_to_type  # pyright: ignore[reportPrivateUsage]

    try:
        _convert_arg_to_type(values, hint)
    except ValueError:
        return False
    return True
