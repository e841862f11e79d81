"""What every agent-socket message shares: checked when made, read from the wire, written to it.

`protocol` declares the messages as data; this module is the plumbing under them, so that a reader of
`protocol` meets the methods and their messages first. A message is a frozen pydantic dataclass
(`@message` on a `Message` subclass), checked by pydantic on construction (the server finds a bad
question before it sends it; the app a bad answer before it answers) and in `from_json` (both ends
check what they receive). A failure is InvalidParams naming the field and the rule it broke, never the
value (pydantic's own words never quote it; the input is also hidden from its error's text).

`Message.to_json` is the one serialisation: every field, in declaration order, a nested message as its
own object and a tuple as a list, except a field named in the class's `OMIT_FOR_OLDER`, which is left
out while it holds its default. Those are the additive fields an older peer never sent and a newer one
must not send when it has nothing to say (`null` is never "left out": `present`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar, Final, Self, TypeVar, cast

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, ValidationInfo
from pydantic.dataclasses import dataclass as pydantic_dataclass
from typing_extensions import dataclass_transform  # typing's lacks frozen_default before 3.12

from .framing import InvalidParams, describe

_T = TypeVar("_T")
_CONFIG: Final = ConfigDict(extra="ignore", hide_input_in_errors=True, defer_build=True)
FROM_WIRE: Final = {"from": "wire"}  # the validation context of a message read off the socket


def present(value: object, info: ValidationInfo) -> object:
    """On the wire, an optional field that is there must hold a value: null is not "left out"."""
    if value is None and info.context == FROM_WIRE:
        raise ValueError("must not be null; leave the field out instead")
    return value


#: pydantic's type errors in JSON's words (a tuple is a list on the wire).
_JSON_TYPES: Final = {
    "dataclass_type": "an object",
    "dataclass_exact_type": "an object",
    "tuple_type": "a list",
    "string_type": "a string",
    "int_type": "a whole number",
    "float_type": "a number",
    "bool_type": "true or false",
}


def _complaint(err: ValidationError, where: str, names: Sequence[str] = ()) -> str:
    """The first problem, as `where.field[i].field: what is wrong.` (a positional argument by its name)."""
    first = err.errors(include_url=False, include_input=False, include_context=False)[0]
    loc = list(first["loc"])
    if loc and isinstance(loc[0], int) and names and not where:  # constructed with positional arguments
        loc[0] = names[loc[0]] if loc[0] < len(names) else loc[0]
    path = where
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    path = path or "the message"
    kind = first["type"]
    if kind == "missing":
        return f"{path} is missing."
    if kind in _JSON_TYPES:
        return f"{path} must be {_JSON_TYPES[kind]}."
    return f"{path}: {first['msg'].removeprefix('Value error, ')}."


@dataclass_transform(frozen_default=True, field_specifiers=(Field, dataclasses.field))
def message(cls: type[_T]) -> type[_T]:
    """A frozen pydantic dataclass with the protocol's configuration."""
    return cast("type[_T]", pydantic_dataclass(cls, frozen=True, config=_CONFIG))


class _Checked(type):
    """Constructing a message checks it, and a failure is InvalidParams (never a pydantic error)."""

    def __call__(cls: type[_T], *args: Any, **kwargs: Any) -> _T:
        try:
            made: _T = super().__call__(*args, **kwargs)  # type: ignore[misc]
        except ValidationError as err:
            names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
            raise InvalidParams(_complaint(err, "", names)) from None
        return made


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def _adapter(cls: type[Any]) -> TypeAdapter[Any]:
    """The validator of a message type, built on its first message (off the app's start-up)."""
    if cls not in _ADAPTERS:
        _ADAPTERS[cls] = TypeAdapter(cls)
    return _ADAPTERS[cls]


def _json_value(value: object) -> object:
    if isinstance(value, Message):
        return value.to_json()
    if isinstance(value, tuple):
        return [_json_value(item) for item in value]
    return value


class Message(metaclass=_Checked):
    """The base of every message type (declare one with `@message`)."""

    #: How errors name the message: "params" (a request's) or "result" (an answer's).
    WHERE: ClassVar[str] = "params"
    #: Fields the wire must carry although the constructor has a default for them.
    WIRE_REQUIRED: ClassVar[tuple[str, ...]] = ()
    #: Additive fields left off the wire while they hold their default (an older peer never sent them, and
    #: a newer one says nothing rather than "nothing"); every other field is always on the wire.
    OMIT_FOR_OLDER: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def from_json(cls, obj: object, error: type[InvalidParams] = InvalidParams) -> Self:
        """The message in `obj` (parsed JSON), checked; raises `error` naming the field that is wrong."""
        if not isinstance(obj, dict):
            raise error(f"{cls.WHERE} must be an object, not {describe(obj)}.")
        missing = [name for name in cls.WIRE_REQUIRED if name not in obj]
        if missing:
            raise error(f"{cls.WHERE}.{missing[0]} is missing.")
        try:
            parsed: Self = _adapter(cls).validate_python(obj, context=FROM_WIRE)
        except ValidationError as err:
            raise error(_complaint(err, cls.WHERE)) from None
        return parsed

    def to_json(self) -> dict[str, Any]:
        """The wire object: every field in declaration order, but an `OMIT_FOR_OLDER` one at its default."""
        out: dict[str, Any] = {}
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            if field.name in self.OMIT_FOR_OLDER and value == field.default:
                continue
            out[field.name] = _json_value(value)
        return out
