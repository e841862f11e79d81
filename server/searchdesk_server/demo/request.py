"""One request as the handlers see it: decoded path parameters, query parameters and the raw body."""

from __future__ import annotations

from dataclasses import dataclass, field

from .faults import bad_request


@dataclass(frozen=True)
class DemoRequest:
    method: str
    params: dict[str, str]
    query: dict[str, list[str]] = field(default_factory=dict)
    body: bytes = b""

    def param(self, name: str) -> str:
        return self.params[name]

    def query_value(self, name: str) -> str | None:
        """A single-valued query parameter; Google refuses a repeated one."""
        values = self.query.get(name)
        if not values:
            return None
        if len(values) > 1:
            raise bad_request(f"Parameter '{name}' was given {len(values)} times; it takes one value.")
        return values[0]
