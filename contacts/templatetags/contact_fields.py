"""Template filters for what address books keep: days and web addresses."""

import re
from datetime import date

from django import template
from django.utils.formats import date_format

register = template.Library()

# Any leap year: formats a day without its year, February 29 too.
_ANY_YEAR = 2000
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


@register.filter
def day(value: str) -> str:
    """Format a stored day in the active language: "15. April 1980", "15. April"."""
    if not value:
        return ""
    year, month, day_ = value.rsplit("-", 2)
    if year == "-":
        return date_format(date(_ANY_YEAR, int(month), int(day_)), "MONTH_DAY_FORMAT")
    return date_format(date(int(year), int(month), int(day_)), "DATE_FORMAT")


@register.filter
def web_href(url: str) -> str:
    """Return a web address as a link target, or "" when it is not for the web.

    Address books write `www.example.org` without a scheme; only http and
    https become links, so a stored `javascript:` text never runs.
    """
    if url.lower().startswith(("http://", "https://")):
        return url
    if _SCHEME.match(url) or url.startswith("/"):
        return ""
    return f"https://{url}"
