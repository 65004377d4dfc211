"""The shared state of a run: a dataclass (typed fields) or a plain dict, kept as JSON in the
checkpoint. Nested dataclasses are saved as dicts and come back as dicts."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, get_origin

from .errors import FlowError


def check_state_type(state_type: Any) -> type:
    if state_type is dict or get_origin(state_type) is dict:
        return dict
    if isinstance(state_type, type) and dataclasses.is_dataclass(state_type):
        return state_type
    raise FlowError(f"a flow's state is a dataclass or dict, not {state_type!r}")


def new_state(state_type: type) -> Any:
    """A fresh state; a dataclass must have a default for every field."""
    try:
        return state_type()
    except TypeError as exc:
        raise FlowError(f"cannot make a {state_type.__name__} state: {exc}") from exc


def apply_inputs(state: Any, inputs: Mapping[str, Any]) -> None:
    """Set the fields of ``state`` named in ``inputs``; an unknown name is a FlowError."""
    if isinstance(state, dict):
        state.update(inputs)
        return
    known = [field.name for field in dataclasses.fields(state)]
    for key, value in inputs.items():
        if key not in known:
            raise FlowError(
                f"{type(state).__name__} has no field {key!r} (its fields: {', '.join(known)})"
            )
        setattr(state, key, value)


def state_from_json(state_type: type, data: Any) -> Any:
    """The state saved as ``data``. Raises FlowError when it does not fit ``state_type``."""
    if not isinstance(data, dict):
        raise FlowError(f"the saved state is not an object: {data!r:.80}")
    if state_type is dict:
        return dict(data)
    state = new_state(state_type)
    apply_inputs(state, data)
    return state
