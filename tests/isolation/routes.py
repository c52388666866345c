"""Every URL pattern of the project outside Django admin, read off the resolver."""

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RoutePattern

from yorik.registry import all_skills

HTTP_METHODS = ("get", "post", "put", "patch", "delete")
# Every per-skill call route is covered by the same matrix, which iterates the
# registry; the inventory names them all with this one key.
SKILL_CALL = "api/skills/<registered skill>/call/"
# Routes anyone may open, and why that shows no household's data.
PUBLIC_ROUTES = {
    "accounts/login/": "The login form: it shows no household data before a login.",
    "accounts/logout/": "Ends the visitor's own session and shows nothing.",
    "api/schema/": "The OpenAPI schema describes the API's shapes, never its rows.",
    ".well-known/oauth-protected-resource": (
        "RFC 9728 metadata: where the MCP endpoint is and how to send a token."
    ),
}


@dataclass(frozen=True)
class Route:
    pattern: str
    name: str
    kwargs: tuple[str, ...]
    callback: Callable[..., Any]

    def __str__(self) -> str:
        return self.pattern

    @property
    def is_api(self) -> bool:
        return self.pattern.startswith("api/")

    @property
    def inventory_key(self) -> str:
        """Return the key the route inventory lists the route under."""
        skill_routes = {f"api/skills/{skill.name}/call/" for skill in all_skills()}
        return SKILL_CALL if self.pattern in skill_routes else self.pattern

    def methods(self) -> list[str]:
        """Return the HTTP methods a class-based view answers (API views all are)."""
        view_class = getattr(self.callback, "view_class", None)
        if view_class is None:
            raise AssertionError(f"{self.pattern} has no class-based view to ask.")
        return [method for method in HTTP_METHODS if hasattr(view_class, method)]

    def url(self, samples: Mapping[str, Any]) -> str:
        """Return a concrete URL of the route, its arguments taken from samples."""
        missing = [kwarg for kwarg in self.kwargs if kwarg not in samples]
        if missing:
            raise AssertionError(
                f"{self.pattern} takes {missing}: add sample values for them to "
                "the samples of tests/isolation."
            )
        return reverse(
            self.name, kwargs={kwarg: samples[kwarg] for kwarg in self.kwargs}
        )


def all_routes() -> list[Route]:
    """Return every URL pattern but Django admin's, which its own tests cover."""
    return list(_walk(get_resolver().url_patterns, prefix="", namespace="", kwargs=()))


def guarded_api_routes() -> list[Route]:
    """Return the agent API's routes that need a bearer token."""
    return [
        route
        for route in all_routes()
        if route.is_api and route.pattern not in PUBLIC_ROUTES
    ]


def _walk(
    patterns: list[URLPattern | URLResolver],
    *,
    prefix: str,
    namespace: str,
    kwargs: tuple[str, ...],
) -> Iterator[Route]:
    for entry in patterns:
        pattern = f"{prefix}{entry.pattern}"
        entry_kwargs = (*kwargs, *_pattern_kwargs(entry))
        if isinstance(entry, URLResolver):
            if entry.namespace == "admin":
                continue
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _walk(
                entry.url_patterns,
                prefix=pattern,
                namespace=inner,
                kwargs=entry_kwargs,
            )
        else:
            yield Route(
                pattern=pattern,
                name=f"{namespace}{entry.name}" if entry.name else "",
                kwargs=entry_kwargs,
                callback=entry.callback,
            )


def _pattern_kwargs(entry: URLPattern | URLResolver) -> tuple[str, ...]:
    if isinstance(entry.pattern, RoutePattern):
        return tuple(entry.pattern.converters)
    return tuple(entry.pattern.regex.groupindex)
