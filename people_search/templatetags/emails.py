"""Template filters for email addresses."""

import re

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

# Where a long address may wrap: after its "@" and after each dot.
_BREAK_AFTER = re.compile(r"(?<=[@.])")


@register.filter
def email_breaks(address: str) -> SafeString:
    """Return an address, escaped, with <wbr> where a narrow row may wrap it.

    "t.mueller.dresden@example.com" wraps as "t.mueller.dresden@" and
    "example.com", never as "exampl" and "e.com".
    """
    parts = _BREAK_AFTER.split(address)
    return mark_safe("<wbr>".join(conditional_escape(part) for part in parts))  # noqa: S308
