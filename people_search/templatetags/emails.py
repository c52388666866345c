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

    The address is one box (class "email"): it moves whole to the next line
    when it fits there, and only one longer than the row wraps, as
    "t.mueller.dresden@" and "example.com", never as "exampl" and "e.com".
    """
    parts = _BREAK_AFTER.split(address)
    breakable = "<wbr>".join(conditional_escape(part) for part in parts)
    return mark_safe(f'<span class="email">{breakable}</span>')  # noqa: S308
