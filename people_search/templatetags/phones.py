"""Template filters for phone numbers."""

from django import template

from people_search.engine.phones import format_phone

register = template.Library()


@register.filter
def phone_for(e164: str, region: str) -> str:
    """Format a stored E.164 number the way people of the region write it."""
    return format_phone(e164, region)
